// STATUS: signal 6
// OURS-STDERR: "PluginInterface" error: Failure to allocate device memory: out of memory allocating 1152921504606846976 bytes on ...
// A map the device cannot hold (1 EiB: no machine's allocator gives it, whatever its
// overcommit policy; 4 TiB takes the same path where it does not fit): LLVM's lines, with the
// size and the device in place of LLVM's "Failed to allocate from memory manager".
#include <omp.h>
#include <stdio.h>

int main(void) {
  size_t n = (size_t)1 << 60;
  char *p = (char *)0x1000; /* never touched: the map fails before any copy */
  printf("mapping 1 EiB\n");
  fflush(stdout);
#pragma omp target enter data map(alloc : p[0 : n])
  printf("not reached: present=%d\n", omp_target_is_present(p, 0));
  return 0;
}
