// TOOL: ompt_tool.c
// ENV: OMPT_TOOL_PORTABLE=1
// LATE-COPIES: with copies back landing late the host device's nowait constructs complete at their task's poll, after their end event, and the host device (which frees at completion, not on the queue) reports their deletes there
// DIVERGENCE: LLVM 19 reports constructs with nowait as ompt_target, ompt_target_enter_data, ompt_target_exit_data, ompt_target_update; OpenMP 5.2 (§13.8, §13.6, §13.7, §13.9 "Tool Callbacks") requires ompt_target_nowait and the other _nowait kinds when the nowait clause is present
// Constructs with nowait: the tool sees the _nowait kinds, in the context of the target task
// (its own task and target task data), with their data operations and submission inside.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int a[8] = {0}, b = 0;
#pragma omp target enter data map(to : a) nowait
#pragma omp taskwait
#pragma omp target map(tofrom : b) nowait
  { b = 5; }
#pragma omp taskwait
#pragma omp target update from(a) nowait
#pragma omp taskwait
#pragma omp target exit data map(from : a) nowait
#pragma omp taskwait
  printf("a[0]=%d b=%d\n", a[0], b);
  return 0;
}
