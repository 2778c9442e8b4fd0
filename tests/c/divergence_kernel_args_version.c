// ONLY: clang19 (a hand-built KernelArgs of clang 19's layout; under LLVM 22 the outcome differs and is not yet examined)
// DIVERGENCE: a clang-19 kernel launched with KernelArgs version 2 (no launch-environment word) is refused; LLVM 19 launches it with every argument one parameter off, and the kernel writes the wrong variable
// STATUS: signal 6
// OURS-STDERR: omptarget error: a kernel launched with KernelArgs version 2 takes the launch environment as its first parameter (version 3 or later, as clang 18 and later emit): its 2 arguments would each reach the wrong parameter; not launched ...
// The region's own kernel, launched once by the compiler's code (version 3) and once through
// __tgt_target_kernel with a hand-made version-2 KernelArgsTy.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct entry { void *addr; char *name; size_t size; int32_t flags; int32_t data; };
extern struct entry __start_omp_offloading_entries[], __stop_omp_offloading_entries[];
typedef struct {
  uint32_t Version, NumArgs;
  void **ArgBasePtrs, **ArgPtrs;
  int64_t *ArgSizes, *ArgTypes;
  void **ArgNames, **ArgMappers;
  uint64_t Tripcount, Flags;
  uint32_t NumTeams[3], ThreadLimit[3], DynCGroupMem;
} KernelArgs;
int __tgt_target_kernel(void *loc, int64_t dev, int32_t teams, int32_t threads, void *host_ptr,
                        KernelArgs *args);

static void set_first(int *x, int *y) {
#pragma omp target map(tofrom : x[0 : 1], y[0 : 1])
  { x[0] = 42; }
}

int main(void) {
  int x = 1, y = 2;
  set_first(&x, &y);
  printf("the compiler's launch: x=%d y=%d\n", x, y);
  x = 1;
  void *region = NULL;
  for (struct entry *e = __start_omp_offloading_entries; e < __stop_omp_offloading_entries; ++e)
    if (e->size == 0 && strstr(e->name, "set_first")) region = e->addr;
  void *bases[2] = {&x, &y}, *begins[2] = {&x, &y};
  int64_t sizes[2] = {sizeof x, sizeof y}, types[2] = {0x23, 0x23}; /* tofrom | target_param */
  KernelArgs ka = {2, 2, bases, begins, sizes, types, NULL, NULL, 0, 0, {1, 0, 0}, {1, 0, 0}, 0};
  printf("launching it with KernelArgs version 2\n");
  fflush(stdout);
  int rc = __tgt_target_kernel(NULL, 0, 1, 1, region, &ka);
  printf("rc=%d x=%d y=%d\n", rc, x, y);
  return 0;
}
