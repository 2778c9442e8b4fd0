// clang extension 'ompx_hold': a held mapping is kept by a separate hold
// reference count. Exit data (even delete) does not remove it while a hold
// is active; it disappears when the holding construct ends.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int x = 10;

#pragma omp target data map(ompx_hold, tofrom : x)
  {
    printf("in hold region: present=%d\n", omp_target_is_present(&x, dev));
    /* dynamic ref count goes 0 -> 1 -> 0; hold count keeps it alive */
#pragma omp target enter data map(to : x)
#pragma omp target exit data map(delete : x)
    printf("after enter+delete: present=%d\n", omp_target_is_present(&x, dev));
    if (!omp_target_is_present(&x, dev)) errors++;
#pragma omp target exit data map(release : x)
    printf("after extra release: present=%d\n", omp_target_is_present(&x, dev));
    if (!omp_target_is_present(&x, dev)) errors++;
#pragma omp target map(tofrom : x)
    { x += 5; }
    printf("host x inside hold region=%d\n", x);
    if (x != 10) errors++;
  }
  printf("after hold region: present=%d x=%d\n", omp_target_is_present(&x, dev), x);
  if (omp_target_is_present(&x, dev) || x != 15) errors++;

  /* hold on a target construct itself */
  int y[3] = {1, 2, 3};
#pragma omp target map(ompx_hold, tofrom : y)
  {
    y[0] = 100;
  }
  printf("y[0]=%d present=%d\n", y[0], omp_target_is_present(y, dev));
  if (y[0] != 100 || omp_target_is_present(y, dev)) errors++;

  /* dynamic mapping outlives nothing: enter data, then a hold region, then
     exit data removes it after the hold region ended */
  int z = 1;
#pragma omp target enter data map(to : z)
#pragma omp target data map(ompx_hold, alloc : z)
  {
#pragma omp target map(tofrom : z)
    { z = 2; }
  }
  printf("z present after hold region (dyn ref still 1)=%d\n", omp_target_is_present(&z, dev));
  if (!omp_target_is_present(&z, dev)) errors++;
#pragma omp target exit data map(from : z)
  printf("z=%d present=%d\n", z, omp_target_is_present(&z, dev));
  if (z != 2 || omp_target_is_present(&z, dev)) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
