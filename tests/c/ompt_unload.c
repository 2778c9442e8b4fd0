// TOOL: ompt_tool.c
// SHARED-LIB: reg_shared_lib_lib.c
// ENV: OMPT_TOOL_UNLOAD=1 OMPT_TOOL_PORTABLE=1
// DIVERGENCE: LLVM 19 never dispatches ompt_callback_device_unload (libomp even answers ompt_set_never) and gives every loaded image module id 0; OpenMP 5.2 §19.5.2.22 requires the callback when a code block is unloaded, with the module id device_load gave
// Two images (the program's and a shared library's) are loaded at the first construct, each
// with its own module id, and unloaded when the program ends (device_unload with the same
// ids), before the device is finalised.
#include <stdio.h>

int lib_scale(int x);

int main(void) {
  int x = 1;
#pragma omp target map(tofrom : x)
  { x += 1; }
  printf("x=%d scaled=%d\n", x, lib_scale(x));
  return 0;
}
