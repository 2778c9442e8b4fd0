// ONLY: clang22 (these entry points are LLVM 22's; LLVM 19 lacks them)
// The entry points LLVM 22 added: OpenMP 6.0's device UIDs (omp_get_uid_from_device,
// omp_get_device_from_uid), the kernel-language launch interface (__llvmPushCallConfiguration,
// __llvmPopCallConfiguration, llvmLaunchKernel) and __tgt_target_sync, which libomp calls at
// its synchronisation points. The `interop` construct gives no object on the host device.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct { unsigned x, y, z; } dim3;
unsigned __llvmPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void *stream);
unsigned __llvmPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream);
unsigned llvmLaunchKernel(const void *func, dim3 grid, dim3 block, void *args, size_t shared,
                          void *stream);
void __tgt_target_sync(void *loc, int gtid, void *task, void *event);
struct launch_params { size_t size; void *data; void **ptrs; };

#include "llvm22_entries.h"

int counter = 0;
#pragma omp declare target(counter)

void bump(void) {
#pragma omp target
  { counter += 1; }
}

int main(void) {
  int n = omp_get_num_devices();
  for (int d = 0; d <= n; d++) {
    const char *uid = omp_get_uid_from_device(d);
    printf("device %d: uid %s, back to %d\n", d, uid ? uid : "(null)",
           uid ? omp_get_device_from_uid(uid) : -99);
  }
  printf("uid of omp_invalid_device: %s\n", omp_get_uid_from_device(-2) ? "set" : "(null)");
  printf("device of \"HOST\": %d, of NULL: %d, of \"nonsense\": %d\n", omp_get_device_from_uid("HOST"),
         omp_get_device_from_uid(NULL), omp_get_device_from_uid("nonsense"));

  dim3 g = {4, 2, 1}, b = {64, 1, 1}, g2 = {0, 0, 0}, b2 = {0, 0, 0};
  int stream_token = 0;
  void *stream = NULL;
  size_t shared = 0;
  unsigned rc1 = __llvmPushCallConfiguration(g, b, 256, &stream_token);
  unsigned rc2 = __llvmPopCallConfiguration(&g2, &b2, &shared, &stream);
  printf("call configuration: push %u pop %u, grid %u,%u,%u block %u,%u,%u shared %zu stream kept %d\n",
         rc1, rc2, g2.x, g2.y, g2.z, b2.x, b2.y, b2.z, shared, stream == &stream_token);

  bump();
  void *region = region_named("bump");
  struct launch_params none = {0, NULL, NULL};
  dim3 one = {1, 1, 1};
  unsigned rc3 = llvmLaunchKernel(region, one, one, &none, 0, NULL);
#pragma omp target update from(counter) device(0)
  printf("llvmLaunchKernel: rc %u, counter %d\n", rc3, counter);

  __tgt_target_sync(NULL, 0, NULL, NULL);
  printf("__tgt_target_sync returned\n");

  omp_interop_t obj = omp_interop_none;
#pragma omp interop init(targetsync : obj) device(0)
  printf("interop on the host device: %s\n", obj == omp_interop_none ? "none" : "an object");
  return 0;
}
