// target enter data / target exit data with to, alloc, from, release, delete.
#include <omp.h>
#include <stdio.h>

#define N 10

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int a[N], b[N], c[N];
  for (int i = 0; i < N; ++i) {
    a[i] = i;
    b[i] = 0;
    c[i] = 7;
  }
  printf("before: present a=%d b=%d c=%d\n", omp_target_is_present(a, dev),
         omp_target_is_present(b, dev), omp_target_is_present(c, dev));

#pragma omp target enter data map(to : a) map(alloc : b, c)
  printf("after enter: present a=%d b=%d c=%d\n", omp_target_is_present(a, dev),
         omp_target_is_present(b, dev), omp_target_is_present(c, dev));
  if (!omp_target_is_present(a, dev) || !omp_target_is_present(b, dev) ||
      !omp_target_is_present(c, dev))
    errors++;

#pragma omp target
  {
    for (int i = 0; i < N; ++i) {
      b[i] = a[i] * a[i];
      c[i] = -1;
    }
  }
  /* nothing copied yet */
  printf("host b[3]=%d c[3]=%d before exit\n", b[3], c[3]);
  if (b[3] != 0 || c[3] != 7) errors++;

  /* from: copies back and removes (ref count 1 -> 0) */
#pragma omp target exit data map(from : b)
  printf("host b[3]=%d b[9]=%d after exit from\n", b[3], b[9]);
  if (b[3] != 9 || b[9] != 81) errors++;
  printf("present b=%d\n", omp_target_is_present(b, dev));
  if (omp_target_is_present(b, dev)) errors++;

  /* release: no copy, mapping removed */
#pragma omp target exit data map(release : c)
  printf("host c[3]=%d after release, present c=%d\n", c[3], omp_target_is_present(c, dev));
  if (c[3] != 7 || omp_target_is_present(c, dev)) errors++;

  /* delete: no copy, mapping removed */
#pragma omp target exit data map(delete : a)
  printf("present a=%d after delete\n", omp_target_is_present(a, dev));
  if (omp_target_is_present(a, dev)) errors++;

  /* a fresh mapping after deletion re-copies current host data */
  for (int i = 0; i < N; ++i) a[i] = 1000 + i;
  int s = 0;
#pragma omp target map(to : a) map(from : s)
  {
    s = 0;
    for (int i = 0; i < N; ++i) s += a[i];
  }
  printf("sum of remapped a = %d\n", s);
  if (s != 10045) errors++;

  /* exit data on something never mapped is a no-op */
  int never = 3;
#pragma omp target exit data map(from : never)
#pragma omp target exit data map(delete : never)
  printf("never=%d present=%d\n", never, omp_target_is_present(&never, dev));
  if (never != 3) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
