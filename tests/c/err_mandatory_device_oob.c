// STATUS: signal 6
// ENV: OMP_TARGET_OFFLOAD=MANDATORY
// STDERR
// OMP_TARGET_OFFLOAD=MANDATORY with target enter data on device 9.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int x = 1;
  printf("about to enter data on device 9\n");
  fflush(stdout);
#pragma omp target enter data map(to : x) device(9)
  printf("unreachable\n");
  return 0;
}
