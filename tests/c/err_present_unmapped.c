// STATUS: signal 6
// STDERR
// map(present, to: x) on data that is not mapped: the runtime reports the
// missing mapping and, since offloading is treated as mandatory once a
// device exists, aborts (exit status 134).
#include <omp.h>
#include <stdio.h>

int main(void) {
  int x = 1;
  int y[4] = {1, 2, 3, 4};
  /* a correct use first: y is present inside the data region */
#pragma omp target data map(to : y)
  {
#pragma omp target map(present, to : y)
    { y[0] += 1; }
  }
  printf("present on mapped data: ok\n");
  printf("about to map x with present (not mapped)\n");
  fflush(stdout);
#pragma omp target map(present, to : x)
  { x++; }
  printf("unreachable: x=%d\n", x);
  return 0;
}
