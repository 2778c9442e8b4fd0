// STATUS: signal 6
// ONLY: clang19 (it reads the entry table through __start_omp_offloading_entries, a section clang 22 renamed)
// OURS-STDERR: omptarget error: __tgt_target_data_begin_mapper: -1 map items (a negative count): nothing done
// OURS-STDERR: omptarget error: KernelArgs NumArgs is 2147483648, more arguments than a construct can pass (at most 2147483647): the region is not launched
// Argument counts no compiler passes: a data construct with arg_num = -1 does nothing (as in
// LLVM 19) and says so; a kernel launch with KernelArgs NumArgs = 2^31 is refused with a
// message saying why (LLVM 19 stops with "LLVM ERROR: SmallVector unable to grow").
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
void __tgt_target_data_begin_mapper(void *loc, int64_t dev, int32_t n, void **bases, void **begins,
                                    int64_t *sizes, int64_t *types, void **names, void **mappers);

static void bump(int *x) {
#pragma omp target map(tofrom : x[0 : 1])
  { x[0] += 1; }
}

int main(void) {
  int x = 1;
  void *base = &x, *begin = &x;
  int64_t size = sizeof x, type = 0x23; /* tofrom | target_param */
  __tgt_target_data_begin_mapper(NULL, 0, -1, &base, &begin, &size, &type, NULL, NULL);
  printf("data begin with -1 items returned; present=%d\n", omp_target_is_present(&x, 0));
  bump(&x);
  void *region = NULL;
  for (struct entry *e = __start_omp_offloading_entries; e < __stop_omp_offloading_entries; ++e)
    if (e->size == 0 && strstr(e->name, "bump")) region = e->addr;
  printf("x=%d, region found: %d\n", x, region != NULL);
  fflush(stdout);
  KernelArgs ka = {3, 1u << 31, &base, &begin, &size, &type, NULL, NULL, 0, 0, {1, 0, 0}, {1, 0, 0}, 0};
  __tgt_target_kernel(NULL, 0, 1, 1, region, &ka);
  printf("not reached: x=%d\n", x);
  return 0;
}
