// STATUS: signal 6
// ENV: OMP_DEFAULT_DEVICE=7
// STDERR
// OMP_DEFAULT_DEVICE=7 (out of range): the query routines work, the first
// target construct without a device clause aborts.
#include <omp.h>
#include <stdio.h>

int main(void) {
  printf("default_device=%d num_devices=%d\n", omp_get_default_device(), omp_get_num_devices());
  int x = 1;
  /* an explicit device clause is not affected */
#pragma omp target device(0) map(tofrom : x)
  { x++; }
  printf("device(0) region: x=%d\n", x);
  printf("about to run a region on the default device\n");
  fflush(stdout);
#pragma omp target map(tofrom : x)
  { x++; }
  printf("unreachable: x=%d\n", x);
  return 0;
}
