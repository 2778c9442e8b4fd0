// TOOL: ompt_tool.c
// ENV: OMPT_TOOL_MODE=noemi OMPT_TOOL_PORTABLE=1
// DIVERGENCE: LLVM 19 gives `target enter data` (and `target data`'s entry) no target id in the non-EMI ompt_callback_target and its data operations (target_id 0, which OpenMP 5.2 §19.5.2.26 reserves for "none"); we give every construct its own id
// A non-EMI tool sees a target id for every construct, enter data included, and the same id
// in the construct's data operations.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int a[8] = {0};
#pragma omp target enter data map(to : a)
#pragma omp target map(tofrom : a)
  { a[0] = 1; }
#pragma omp target exit data map(from : a)
#pragma omp target data map(tofrom : a)
  {
#pragma omp target
    { a[1] = 2; }
  }
  printf("a[0]=%d a[1]=%d\n", a[0], a[1]);
  return 0;
}
