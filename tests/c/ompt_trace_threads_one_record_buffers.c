// TOOL: ompt_trace_tool.c
// ENV: OMP_NUM_THREADS=8 OMPT_TRACE_BUFFER=104
// EXTENSION: OMPT device tracing (OpenMP 5.2 §19.6.2), which LLVM 19 does not offer
// Eight threads run target regions on device 0 at once while the tool hands out buffers of
// exactly one record, so every record closes a buffer and threads keep closing buffers while
// others are still in the completion callback: the buffers must still reach the tool in the
// order they were closed, so that each thread's records come in order, and none is lost.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int v[8][16] = {{0}};
#pragma omp parallel num_threads(8)
  {
    int t = omp_get_thread_num();
    for (int r = 0; r < 16; r++) {
#pragma omp target map(tofrom : v[t][0 : 16]) // 5 records each
      {
        for (int i = 0; i < 16; i++) v[t][i] += 1;
      }
    }
  }
  int sum = 0;
  for (int t = 0; t < 8; t++)
    for (int i = 0; i < 16; i++) sum += v[t][i];
  printf("sum=%d (expected %d)\n", sum, 8 * 16 * 16);
  return 0;
}
