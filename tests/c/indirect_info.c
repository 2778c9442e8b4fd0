// ENV: LIBOMPTARGET_INFO=32
// STDERR
// `declare target indirect` and LIBOMPTARGET_INFO 0x20 (data transfers): loading the image
// reads the device function's address from its device global (one 8-byte copy from the
// device, LLVM 19's words), then the region's own transfers follow.
#include <stdio.h>

#pragma omp begin declare target indirect
int cube(int x) { return x * x * x; }
#pragma omp end declare target

int main(void) {
  int (*f)(int) = cube;
  int x = 3, r = 0;
#pragma omp target map(to : x) map(from : r) firstprivate(f)
  r = f(x);
  printf("cube(3)=%d\n", r);
  return r != 27;
}
