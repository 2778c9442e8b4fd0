// STATUS: signal 6
// GPU-UNCOMPARED: unified shared memory on an H200 without HMM/ATS (PAGEABLE_MEMORY_ACCESS 0): ours refuses at registration, LLVM 19 faults (docs/GPU.md)
// STDERR
// `unified_shared_memory` (OpenMP 5.2 §5.9): `target update` with the `present` motion
// modifier of data that is not mapped fails as without the requirement (LLVM 19's message
// and fatal error, since offloading is mandatory once a device exists); the same item in a
// map with `present` does not fail.
#include <stdio.h>

#pragma omp requires unified_shared_memory

int main(void) {
  int a[4] = {0};
#pragma omp target map(present, tofrom : a)
  a[0] = 1;
  printf("map with present: ok\n");
  fflush(stdout);
#pragma omp target update to(present : a)
  printf("not reached\n");
  return 0;
}
