// ENV: LIBOMPTARGET_NUM_INITIAL_STREAMS=100000000
// OURS-STDERR: omptarget message: LIBOMPTARGET_NUM_INITIAL_STREAMS=100000000 is more than this runtime accepts: using 1024
// Every number read from the environment is bounded, with a message when clamped: 10^8
// initial queues become 1024 (before, ours built 10^8 queue tokens: 5.4 s and 3.1 GB).
#include <stdio.h>

int main(void) {
  int x = 1;
#pragma omp target map(tofrom : x)
  x++;
  printf("x=%d\n", x);
  return x != 2;
}
