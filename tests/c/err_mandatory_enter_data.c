// STATUS: signal 6
// ENV: OMP_TARGET_OFFLOAD=MANDATORY
// STDERR
// OMP_TARGET_OFFLOAD=MANDATORY with a failing data construct: target
// enter data that extends an existing mapping.
#include <omp.h>
#include <stdio.h>

int main(void) {
  double d[16];
  for (int i = 0; i < 16; ++i) d[i] = i;
#pragma omp target enter data map(to : d[0:8])
  int ok = -1;
#pragma omp target map(from : ok)
  { ok = !omp_is_initial_device(); }
  printf("mandatory offload works: ran on device=%d\n", ok);
  printf("about to enter d[0:16]\n");
  fflush(stdout);
#pragma omp target enter data map(to : d[0:16])
  printf("unreachable\n");
  return 0;
}
