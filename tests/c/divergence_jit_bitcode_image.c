// ONLY: clang19 (clang-22 cannot link -fopenmp-target-jit here (/usr/bin/ld: unrecognized option --lto-emit-llvm))
// CFLAGS: -fopenmp-target-jit
// DIVERGENCE: a program whose device image is LLVM bitcode (-fopenmp-target-jit) gets a message saying no device can run it and runs its regions on the host; LLVM 19 (whose JIT has no targets in Debian's build) reports "Failure to jit IR image" and crashes (SIGSEGV)
// OURS-STDERR: omptarget message: a device image of this program is LLVM bitcode (built with -fopenmp-target-jit?); this runtime compiles no bitcode, so no device runs it: its target regions run on the host unless offloading is mandatory
#include <stdio.h>

int main(void) {
  int x = 1;
#pragma omp target map(tofrom : x)
  x++;
  printf("x=%d\n", x);
  return x != 2;
}
