// GPU-UNCOMPARED: LLVM 19's CUDA plugin fails these launches on an H200 (cuLaunchKernel: invalid argument): a version 1 launch passes no launch environment to a clang 19 kernel, which takes one; ours passes it (docs/DIVERGENCES.md)
// ONLY: clang19 (it reads the entry table through __start_omp_offloading_entries, a section clang 22 renamed)
// The launch entry points clang <= 16 emitted (__tgt_target_mapper, __tgt_target_teams_mapper,
// __tgt_target, __tgt_target_teams), called directly with the region id of a kernel this
// program contains. They pass no launch-environment word (KernelArgs version 1), so the kernel
// used here takes no arguments and communicates through a declare target global.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct entry { void *addr; char *name; size_t size; int32_t flags; int32_t data; };
extern struct entry __start_omp_offloading_entries[], __stop_omp_offloading_entries[];
int __tgt_target_mapper(void *loc, int64_t dev, void *host_ptr, int32_t n, void **bases, void **begins,
                        int64_t *sizes, int64_t *types, void **names, void **mappers);
int __tgt_target_teams_mapper(void *loc, int64_t dev, void *host_ptr, int32_t n, void **bases, void **begins,
                              int64_t *sizes, int64_t *types, void **names, void **mappers, int32_t teams,
                              int32_t threads);
int __tgt_target(int64_t dev, void *host_ptr, int32_t n, void **bases, void **begins, int64_t *sizes,
                 int64_t *types);
int __tgt_target_teams(int64_t dev, void *host_ptr, int32_t n, void **bases, void **begins, int64_t *sizes,
                       int64_t *types, int32_t teams, int32_t threads);

int counter = 0;
#pragma omp declare target(counter)

static void bump(void) {
#pragma omp target
  { counter += 1; }
}

int main(void) {
  int dev = omp_get_default_device();
  bump();
#pragma omp target update from(counter)
  printf("after the pragma: counter=%d\n", counter);
  void *region = NULL;
  for (struct entry *e = __start_omp_offloading_entries; e < __stop_omp_offloading_entries; ++e)
    if (e->size == 0 && strstr(e->name, "bump")) region = e->addr;
  printf("found the region: %d\n", region != NULL);
  int rc1 = __tgt_target_mapper(NULL, dev, region, 0, NULL, NULL, NULL, NULL, NULL, NULL);
  int rc2 = __tgt_target_teams_mapper(NULL, dev, region, 0, NULL, NULL, NULL, NULL, NULL, NULL, 1, 1);
  int rc3 = __tgt_target(dev, region, 0, NULL, NULL, NULL, NULL);
  int rc4 = __tgt_target_teams(dev, region, 0, NULL, NULL, NULL, NULL, 1, 1);
#pragma omp target update from(counter)
  printf("return codes: %d %d %d %d counter=%d\n", rc1, rc2, rc3, rc4, counter);
  printf("%s\n", counter == 5 && !rc1 && !rc2 && !rc3 && !rc4 ? "PASS" : "FAIL");
  return 0;
}
