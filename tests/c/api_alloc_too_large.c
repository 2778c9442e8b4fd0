// OURS-STDERR: "PluginInterface" error: Failure to allocate device memory: out of memory allocating 18446744073709551615 bytes on ...
// OURS-STDERR: "PluginInterface" error: Failure to allocate device memory: out of memory allocating 4611686018427387904 bytes on ...
// omp_target_alloc of sizes no device has: NULL, with LLVM's line naming the size and the
// device (before, SIZE_MAX gave NULL without a word); on the initial device NULL, silently, as
// LLVM 19 does.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

int main(void) {
  void *p = omp_target_alloc(SIZE_MAX, 0);
  printf("omp_target_alloc(SIZE_MAX, 0) = %s\n", p ? "non-null" : "NULL");
  void *q = omp_target_alloc((size_t)1 << 62, 0);
  printf("omp_target_alloc(2^62, 0) = %s\n", q ? "non-null" : "NULL");
  void *h = omp_target_alloc(SIZE_MAX, omp_get_initial_device());
  printf("omp_target_alloc(SIZE_MAX, initial device) = %s\n", h ? "non-null" : "NULL");
  return 0;
}
