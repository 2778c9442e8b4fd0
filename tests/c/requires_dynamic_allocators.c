// `#pragma omp requires dynamic_allocators` (OpenMP 5.2 §8.2.1, §6.2): memory allocation
// routines may be called in target regions without `uses_allocators`. clang 19 records no
// requirement for this clause and LLVM 19's runtime changes nothing; the allocations happen
// in the device code. (LLVM 19's GPU device runtime has no omp_alloc/omp_free: on GPUs the
// program brings its own, over malloc.)
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#pragma omp begin declare variant match(device = {kind(gpu)})
void *omp_alloc(size_t size, omp_allocator_handle_t allocator) { return malloc(size); }
void omp_free(void *ptr, omp_allocator_handle_t allocator) { free(ptr); }
#pragma omp end declare variant

#pragma omp requires dynamic_allocators

int main(void) {
  int errors = 0;
  int sums[4] = {0};
#pragma omp target teams distribute map(from : sums)
  for (int t = 0; t < 4; t++) {
    int n = 8 * (t + 1);
    int *buf = (int *)omp_alloc(n * sizeof(int), omp_default_mem_alloc);
    int s = -1;
    if (buf) {
      for (int i = 0; i < n; i++)
        buf[i] = i;
      s = 0;
      for (int i = 0; i < n; i++)
        s += buf[i];
      omp_free(buf, omp_default_mem_alloc);
    }
    sums[t] = s;
  }
  for (int t = 0; t < 4; t++) {
    int n = 8 * (t + 1);
    if (sums[t] != n * (n - 1) / 2)
      errors++;
  }
  printf("sums %d %d %d %d\n", sums[0], sums[1], sums[2], sums[3]);
  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
