// STATUS: signal 6
// STDERR
// omp_target_alloc with device number 7 (out of range, 4 devices):
// LLVM 19 aborts with a fatal error instead of returning NULL.
#include <omp.h>
#include <stdio.h>

int main(void) {
  void *p = omp_target_alloc(16, 3);
  printf("alloc on device 3: %s\n", p ? "ok" : "NULL");
  omp_target_free(p, 3);
  printf("about to call omp_target_alloc(16, 7)\n");
  fflush(stdout);
  void *q = omp_target_alloc(16, 7);
  printf("unreachable: %s\n", q ? "ok" : "NULL");
  return 0;
}
