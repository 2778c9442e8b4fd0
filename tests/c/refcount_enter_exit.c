// Dynamic reference counts with enter/exit data: enter twice, exit once
// (still present, no copy back), exit again (copy back, gone). 'delete'
// drops the count to zero regardless of its value.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int x = 1;

#pragma omp target enter data map(to : x)
#pragma omp target enter data map(to : x) /* count 2; no copy */
#pragma omp target map(tofrom : x)
  { x = 2; }
#pragma omp target exit data map(from : x) /* count 1: no copy back */
  printf("after first exit: x=%d present=%d\n", x, omp_target_is_present(&x, dev));
  if (x != 1 || !omp_target_is_present(&x, dev)) errors++;
#pragma omp target exit data map(from : x) /* count 0: copy back */
  printf("after second exit: x=%d present=%d\n", x, omp_target_is_present(&x, dev));
  if (x != 2 || omp_target_is_present(&x, dev)) errors++;

  /* delete drops to zero from any count (and does not copy) */
  int y = 10;
  for (int i = 0; i < 5; ++i) {
#pragma omp target enter data map(to : y)
  }
#pragma omp target map(tofrom : y)
  { y = 11; }
#pragma omp target exit data map(delete : y)
  printf("after delete with count 5: y=%d present=%d\n", y, omp_target_is_present(&y, dev));
  if (y != 10 || omp_target_is_present(&y, dev)) errors++;

  /* release decrements by one and never copies back */
  int z = 3;
#pragma omp target enter data map(to : z)
#pragma omp target enter data map(to : z)
#pragma omp target map(tofrom : z)
  { z = 33; }
#pragma omp target exit data map(release : z)
  printf("after release (count 2->1): z=%d present=%d\n", z, omp_target_is_present(&z, dev));
  if (z != 3 || !omp_target_is_present(&z, dev)) errors++;
#pragma omp target exit data map(release : z)
  printf("after release (count 1->0): z=%d present=%d\n", z, omp_target_is_present(&z, dev));
  if (z != 3 || omp_target_is_present(&z, dev)) errors++;

  /* a target region on a dynamically mapped variable keeps the count */
  int w[2] = {5, 6};
#pragma omp target enter data map(to : w)
  for (int i = 0; i < 3; ++i) {
#pragma omp target map(tofrom : w)
    { w[0] += 1; }
  }
  printf("host w[0] while mapped=%d\n", w[0]);
  if (w[0] != 5) errors++;
#pragma omp target exit data map(from : w)
  printf("host w[0] after exit=%d\n", w[0]);
  if (w[0] != 8) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
