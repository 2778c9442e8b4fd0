// declare target link (OpenMP 5.2 §7.8.1): the device copy of a linked
// global is created only when it is mapped; a region that maps it reads
// and writes the mapped copy, through the global's name, also from a
// declare target function.
#include <omp.h>
#include <stdio.h>

int arr[8];
int scal = 5;
#pragma omp declare target link(arr, scal)

#pragma omp declare target
static int sum_arr(void) {
  int s = 0;
  for (int i = 0; i < 8; ++i) s += arr[i];
  return s;
}
#pragma omp end declare target

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  for (int i = 0; i < 8; ++i) arr[i] = i;

  /* 1. tofrom on a target region */
  int s = 0;
#pragma omp target map(tofrom : arr) map(from : s)
  {
    s = sum_arr();
    for (int i = 0; i < 8; ++i) arr[i] *= 2;
  }
  printf("1: device sum=%d arr[7]=%d\n", s, arr[7]);
  if (s != 28 || arr[7] != 14) errors++;

  /* 2. scalar link variable */
#pragma omp target map(tofrom : scal)
  { scal += 10; }
  printf("2: scal=%d\n", scal);
  if (scal != 15) errors++;

  /* 3. kept mapped across regions with target data; host changes not seen */
#pragma omp target data map(tofrom : arr)
  {
    arr[0] = -100; /* host only */
#pragma omp target map(tofrom : arr) map(from : s)
    {
      s = sum_arr();
      arr[1] = 111;
    }
    printf("3: device sum=%d (host arr[0] not copied) present=%d\n", s,
           omp_target_is_present(arr, dev));
    if (s != 56 || !omp_target_is_present(arr, dev)) errors++;
  }
  printf("3: after: arr[0]=%d arr[1]=%d\n", arr[0], arr[1]);
  if (arr[0] != 0 || arr[1] != 111) errors++;

  /* 4. enter/update/exit data on the linked array */
#pragma omp target enter data map(to : arr)
#pragma omp target map(tofrom : arr)
  { arr[2] = 222; }
#pragma omp target update from(arr[2:1])
  printf("4: arr[2]=%d\n", arr[2]);
  if (arr[2] != 222) errors++;
#pragma omp target exit data map(delete : arr)
  printf("4: present after delete=%d\n", omp_target_is_present(arr, dev));

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
