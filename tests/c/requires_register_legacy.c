// GPU-UNCOMPARED: unified shared memory on an H200 without HMM/ATS (PAGEABLE_MEMORY_ACCESS 0): ours refuses at registration, LLVM 19 faults (docs/GPU.md)
// STDERR
// `__tgt_register_requires`, through which clang 18 and older registered `#pragma omp
// requires`, is gone from LLVM 19's runtime: a call only prints that it was removed and
// registers nothing (requirements come from the host entry table), so a conflicting call
// is not an error. Here the program requires `unified_shared_memory` through clang 19's
// record, then calls the old entry point with other flags.
#include <stdint.h>
#include <stdio.h>

#pragma omp requires unified_shared_memory

void __tgt_register_requires(int64_t flags);

int main(void) {
  __tgt_register_requires(0x4); // unified_address only: ignored
  __tgt_register_requires(0x1);
  int a[2] = {1, 2};
#pragma omp target map(to : a)
  a[1] = 20; // still unified shared memory: visible on the host
  printf("a[1]=%d\n", a[1]);
  return a[1] != 20;
}
