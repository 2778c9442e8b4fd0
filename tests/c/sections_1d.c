// Array sections of a 1-D array: a[2:5], a[lo:len] with runtime bounds,
// a[:n] and a[k:] forms; data outside the section is never touched.
#include <omp.h>
#include <stdio.h>

#define N 12

int main(void) {
  int errors = 0;
  int a[N];
  for (int i = 0; i < N; ++i) a[i] = i;

#pragma omp target map(tofrom : a[2:5])
  {
    for (int i = 2; i < 7; ++i) a[i] = a[i] * 10;
  }
  printf("a[2:5]:");
  for (int i = 0; i < N; ++i) printf(" %d", a[i]);
  printf("\n");
  for (int i = 0; i < N; ++i)
    if (a[i] != ((i >= 2 && i < 7) ? 10 * i : i)) errors++;

  int lo = 8, len = 3;
#pragma omp target map(tofrom : a[lo:len])
  {
    for (int i = lo; i < lo + len; ++i) a[i] = -a[i];
  }
  printf("a[8:3]:");
  for (int i = 0; i < N; ++i) printf(" %d", a[i]);
  printf("\n");
  if (a[8] != -8 || a[10] != -10 || a[11] != 11 || a[7] != 7) errors++;

  int n = 2;
#pragma omp target map(tofrom : a[:n])
  { a[0] = 100; a[1] = 101; }
#pragma omp target map(tofrom : a[10:])
  { a[10] = 110; a[11] = 111; }
  printf("a[:2] and a[10:]:");
  for (int i = 0; i < N; ++i) printf(" %d", a[i]);
  printf("\n");
  if (a[0] != 100 || a[1] != 101 || a[10] != 110 || a[11] != 111) errors++;

  /* the section is what is present, not the whole array */
  int dev = omp_get_default_device();
#pragma omp target enter data map(to : a[4:4])
  printf("present a[4]=%d a[7]=%d a[3]=%d a[8]=%d\n", omp_target_is_present(&a[4], dev),
         omp_target_is_present(&a[7], dev), omp_target_is_present(&a[3], dev),
         omp_target_is_present(&a[8], dev));
  if (!omp_target_is_present(&a[4], dev) || !omp_target_is_present(&a[7], dev) ||
      omp_target_is_present(&a[3], dev) || omp_target_is_present(&a[8], dev))
    errors++;
#pragma omp target exit data map(delete : a[4:4])

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
