// STATUS: signal 6
// STDERR
// Device number -1 (omp_initial_device in OpenMP 5.2) passed to
// omp_target_alloc: LLVM 19 does not accept it and aborts with a
// fatal error that reports the negative device number.
#include <omp.h>
#include <stdio.h>

int main(void) {
  printf("initial device=%d\n", omp_get_initial_device());
  printf("about to call omp_target_alloc(16, -1)\n");
  fflush(stdout);
  void *q = omp_target_alloc(16, -1);
  printf("unreachable: %s\n", q ? "ok" : "NULL");
  return 0;
}
