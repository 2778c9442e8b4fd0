// TOOL: ompt_trace_tool.c
// EXTENSION: OMPT device tracing (OpenMP 5.2 §19.6.2), which LLVM 19 does not offer
// Device tracing of device 0: records of data operations and kernels of a target region,
// enter/exit data, update and the device memory routines, each checked by the tool against
// its EMI callbacks (ompt_trace_tool.c); a flush in the middle; nothing recorded while the
// trace is paused; the last buffer completed when the device is finalised (no stop).
#include <omp.h>
#include <stdio.h>

static void region(int *a, int n) {
#pragma omp target map(tofrom : a[0 : n])
  {
    for (int i = 0; i < n; i++) a[i] += 1;
  }
}

int main(void) {
  static int a[256], b[64];
  int host = omp_get_initial_device();
  // libomp passes omp_control_tool on to the tool once it is past its middle initialisation.
  (void)omp_get_num_procs();
  region(a, 256); // alloc, to 1024, kernel, from 1024, delete: 5 records
#pragma omp target enter data map(to : b) // alloc, to 256
  omp_control_tool(omp_control_tool_flush, 0, NULL);
  omp_control_tool(64, 0, NULL);
#pragma omp target update from(b) // from 256
#pragma omp target exit data map(delete : b) // delete
  int *p = omp_target_alloc(sizeof a, 0); // alloc
  omp_target_memcpy(p, a, sizeof a, 0, 0, 0, host); // to 1024
  omp_target_free(p, 0); // delete
  omp_control_tool(64, 0, NULL); // the open buffer is not handed over yet: still 7
  omp_control_tool(omp_control_tool_flush, 0, NULL);
  omp_control_tool(64, 0, NULL); // 12
  omp_control_tool(omp_control_tool_pause, 0, NULL);
  region(a, 256); // not recorded
  omp_control_tool(omp_control_tool_start, 0, NULL);
  region(a, 64); // 5 records, 256 bytes each way
  printf("a[0]=%d a[100]=%d\n", a[0], a[100]);
  return 0;
}
