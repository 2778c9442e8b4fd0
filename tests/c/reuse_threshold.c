// ENV: LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD=64
// HOST-ONLY: on a GPU our blocks come from the CUDA memory pool, not LLVM's memory manager
// LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD sets the largest request LLVM 19's memory manager
// keeps freed blocks for, inclusive: with 64, a freed 64-byte block comes back to the next
// 64-byte request, the block freed first first.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int dev = omp_get_default_device();
  void *a = omp_target_alloc(64, dev), *b = omp_target_alloc(64, dev);
  omp_target_free(a, dev);
  omp_target_free(b, dev);
  void *c = omp_target_alloc(64, dev);
  printf("64 bytes: the block freed first %d, the last %d\n", c == a, c == b);
  omp_target_free(c, dev);

  char x[64], y[64], z[64];
#pragma omp target enter data map(alloc : x, y)
  void *px = omp_get_mapped_ptr(x, dev);
#pragma omp target exit data map(delete : x)
#pragma omp target exit data map(delete : y)
#pragma omp target enter data map(alloc : z)
  printf("mapped 64 bytes: z gets x's block %d\n", omp_get_mapped_ptr(z, dev) == px);
#pragma omp target exit data map(delete : z)
  return 0;
}
