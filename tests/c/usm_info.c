// GPU-UNCOMPARED: unified shared memory on an H200 without HMM/ATS (PAGEABLE_MEMORY_ACCESS 0): ours refuses at registration, LLVM 19 faults (docs/GPU.md)
// ENV: LIBOMPTARGET_INFO=8
// STDERR
// `unified_shared_memory` and LIBOMPTARGET_INFO 0x08 (mappings created and removed): each
// map item used in place says so in LLVM 19's words (`Return HstPtrBegin ... for unified
// shared memory`), at entry only; a `close` item is created and removed as usual; a
// zero-length item says nothing.
#include <stdio.h>

#pragma omp requires unified_shared_memory

int main(void) {
  int a[4] = {0}, b[2] = {0};
  int *p = a;
#pragma omp target map(tofrom : a) map(close, tofrom : b)
  {
    a[0] = 1;
    b[0] = 2;
  }
#pragma omp target enter data map(to : a[1 : 2])
#pragma omp target map(p[0 : 0])
  ;
#pragma omp target exit data map(from : a[1 : 2])
  printf("%d %d\n", a[0], b[0]);
  return 0;
}
