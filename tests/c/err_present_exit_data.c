// STATUS: signal 6
// STDERR
// 'present' on target exit data for data that is not mapped.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int v = 3;
  printf("about to exit data with present on unmapped v\n");
  fflush(stdout);
#pragma omp target exit data map(present, from : v)
  printf("unreachable\n");
  return 0;
}
