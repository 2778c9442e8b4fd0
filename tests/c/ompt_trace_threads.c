// TOOL: ompt_trace_tool.c
// ENV: OMP_NUM_THREADS=4
// EXTENSION: OMPT device tracing (OpenMP 5.2 §19.6.2), which LLVM 19 does not offer
// Four threads run target regions on device 0 at once while it is traced: every record is
// delivered once, with the thread id of the thread that issued its operation and the ids
// that thread's EMI callbacks set; each thread's records come in order.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int v[4][16] = {{0}};
#pragma omp parallel num_threads(4)
  {
    int t = omp_get_thread_num();
    for (int r = 0; r < 8; r++) {
#pragma omp target map(tofrom : v[t][0 : 16]) // 5 records each
      {
        for (int i = 0; i < 16; i++) v[t][i] += 1;
      }
    }
  }
  printf("v=%d %d %d %d\n", v[0][0], v[1][5], v[2][10], v[3][15]);
  return 0;
}
