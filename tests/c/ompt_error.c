// STATUS: signal 6
// GPU-UNCOMPARED: LLVM 19's bundled runtime sends the tool no target callbacks on the GPU
// TOOL: ompt_tool.c
// STDERR
// A construct that fails (a `present` map of unmapped data, fatal as offloading is
// mandatory once a device exists): the tool sees its begin event and no end event, as under
// LLVM 19, before the fatal error.
#include <stdio.h>

int main(void) {
  int a[4] = {0};
  printf("-- fine\n");
#pragma omp target map(tofrom : a)
  { a[0] = 1; }
  printf("-- present, not mapped\n");
#pragma omp target map(present, tofrom : a)
  { a[1] = 1; }
  printf("not reached\n");
  return 0;
}
