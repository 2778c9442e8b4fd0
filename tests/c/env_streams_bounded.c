// ENV: LIBOMPTARGET_NUM_INITIAL_STREAMS=2000
// OURS-STDERR: omptarget message: LIBOMPTARGET_NUM_INITIAL_STREAMS=2000 is more than this runtime accepts: using 1024
// Every number read from the environment is bounded, with a message when clamped: 2000
// initial queues become 1024 (10^8 built 10^8 queue tokens: 5.4 s and 3.1 GB; 2000 keeps LLVM 19's CUDA plugin, which creates them all, quick on a GPU).
#include <stdio.h>

int main(void) {
  int x = 1;
#pragma omp target map(tofrom : x)
  x++;
  printf("x=%d\n", x);
  return x != 2;
}
