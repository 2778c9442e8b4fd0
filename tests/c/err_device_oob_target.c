// STATUS: signal 6
// STDERR
// device(7) on a target region with 4 devices: fatal error, abort.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int x = 1;
  printf("num_devices=%d\n", omp_get_num_devices());
  printf("about to run a target region on device 7\n");
  fflush(stdout);
#pragma omp target device(7) map(tofrom : x)
  { x++; }
  printf("unreachable: x=%d\n", x);
  return 0;
}
