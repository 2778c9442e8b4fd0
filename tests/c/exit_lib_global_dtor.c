// SHARED-LIB: exit_lib_global_dtor_lib.cpp
// ENV: OMP_TARGET_OFFLOAD=MANDATORY
// A shared library that offloads from its C++ global destructor and an atexit handler, which
// run at exit after this program's image is unregistered and before the library's: the
// library's constructs run on the device and the library checks their results (a construct
// skipped, or run on the host, leaves wrong values).
#include <omp.h>
#include <stdio.h>

void lib_setup(void);

int main(void) {
  int x = 1;
#pragma omp target map(tofrom : x)
  x += 1;
  lib_setup();
  printf("main: x %d\n", x);
  return 0;
}
