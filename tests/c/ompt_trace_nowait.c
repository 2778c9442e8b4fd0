// TOOL: ompt_trace_tool.c
// ENV: OMPT_TRACE_KERNEL=1
// EXTENSION: OMPT device tracing (OpenMP 5.2 §19.6.2), which LLVM 19 does not offer
// A flush while a `nowait` region may still be running (its records come when it completes),
// a kernel whose record lasts as long as the region took on the host's clock, and a stopped
// trace: the later region is not recorded and flushing a stopped trace fails.
#include <omp.h>
#include <stdio.h>

static double spin(double seconds) {
  double t0 = omp_get_wtime(), x = 0;
  while (omp_get_wtime() - t0 < seconds) x += 1;
  return x;
}

#pragma omp declare target to(spin)

int main(void) {
  double x = 0, y = 0;
  // libomp passes omp_control_tool on to the tool once it is past its middle initialisation.
  (void)omp_get_num_procs();
#pragma omp target map(tofrom : x) nowait // 5 records
  { x = spin(0.05); }
  omp_control_tool(omp_control_tool_flush, 0, NULL);
#pragma omp taskwait
  // A long kernel: its record's duration against the region's wall time.
  double t0 = omp_get_wtime();
#pragma omp target map(tofrom : y) // 5 records
  { y = spin(0.2); }
  omp_control_tool(65, (int)((omp_get_wtime() - t0) * 1e6), NULL);
  omp_control_tool(omp_control_tool_end, 0, NULL);
#pragma omp target map(tofrom : y) // not recorded
  { y += 1; }
  omp_control_tool(omp_control_tool_flush, 0, NULL);
  printf("spun: %s\n", x > 0 && y > 0 ? "yes" : "no");
  return 0;
}
