// ONLY: clang22 (llvmLaunchKernel is LLVM 22's)
// DIVERGENCE: llvmLaunchKernel with a parameter buffer on the host device is refused with a message (no compiler makes host-device kernels of a kernel language, and the buffer does not give the parameters' types, which the host calling convention needs); LLVM 22's host plugin runs the kernel without the buffer (docs/DIVERGENCES.md S9)
// STATUS: signal 6
// OURS-STDERR: "PluginInterface" error: Failure to run target region 0xADDR in device 0: a kernel-language launch passes 8 bytes of parameters; the host device runs only OpenMP kernels, whose parameters are pointer words
// (The failed launch ends the program, as any failed target construct does under LLVM.)
// The same launch without parameters runs (api_llvm22_exports.c); on a GPU the buffer reaches
// the kernel (gpu/tools/cuda_via_llvm.cu).
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct { unsigned x, y, z; } dim3;
unsigned llvmLaunchKernel(const void *func, dim3 grid, dim3 block, void *args, size_t shared,
                          void *stream);
struct launch_params { size_t size; void *data; void **ptrs; };
#include "llvm22_entries.h"

int counter = 0;
#pragma omp declare target(counter)

void bump(void) {
#pragma omp target
  { counter += 1; }
}

int main(void) {
  bump();
  void *region = region_named("bump");
  long word = 42;
  void *ptrs[1] = {&word};
  struct launch_params p = {sizeof word, &word, ptrs};
  dim3 one = {1, 1, 1};
  unsigned rc = llvmLaunchKernel(region, one, one, &p, 0, NULL);
#pragma omp target update from(counter) device(0)
  printf("llvmLaunchKernel with 8 bytes of parameters: %s, counter %d\n", rc ? "refused" : "launched", counter);
  return 0;
}
