// GPU-UNCOMPARED: unified shared memory on an H200 without HMM/ATS (PAGEABLE_MEMORY_ACCESS 0): ours refuses at registration, LLVM 19 faults (docs/GPU.md)
// DIVERGENCE(clang19): LLVM 19 overwrites an indirect function's device address with the host function's code bytes under unified_shared_memory, so the call through the pointer crashes
// `declare target indirect` under `#pragma omp requires unified_shared_memory` (OpenMP 5.2
// §7.8.2, §8.2.1): nothing in the specification limits indirect device invocation to
// programs without unified shared memory; a host function pointer passed to a region calls
// the device version of its function either way. (docs/DIVERGENCES.md)
#include <stdio.h>

#pragma omp requires unified_shared_memory

#pragma omp begin declare target indirect
int inc(int x) { return x + 1; }
int dbl(int x) { return 2 * x; }
#pragma omp end declare target

typedef int (*op_t)(int);

int main(void) {
  int v[4] = {1, 2, 3, 4};
  op_t f = inc, g = dbl;
#pragma omp target firstprivate(f, g)
  for (int i = 0; i < 4; i++)
    v[i] = i % 2 ? g(v[i]) : f(v[i]);
  printf("%d %d %d %d\n", v[0], v[1], v[2], v[3]);
  return !(v[0] == 2 && v[1] == 4 && v[2] == 4 && v[3] == 8);
}
