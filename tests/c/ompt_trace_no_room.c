// TOOL: ompt_trace_tool.c
// ENV: OMPT_TRACE_ZERO=2 OMPT_TRACE_BUFFER=104
// EXTENSION: OMPT device tracing (OpenMP 5.2 §19.6.2), which LLVM 19 does not offer
// A tool that answers the first two buffer requests with a 0-byte buffer, then hands out
// buffers of exactly one record: the two records that found no room are lost (and nothing
// else), every later record fills a buffer of its own, and nothing crashes or hangs.
#include <stdio.h>

int main(void) {
  int x[4] = {1, 2, 3, 4};
#pragma omp target map(tofrom : x) // 5 records, the first two lost
  { x[0] += 10; }
#pragma omp target map(tofrom : x) // 5 more
  { x[1] += 10; }
  printf("x=%d %d\n", x[0], x[1]);
  return 0;
}
