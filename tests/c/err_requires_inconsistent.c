// STATUS(clang19): signal 6
// STDERR
// Requirements registered by one binary must agree (OpenMP 5.2 §8.2: all compilation units
// with device constructs, or none, specify reverse_offload, unified_address and
// unified_shared_memory). clang 19 records only
// `unified_shared_memory`, as a host entry with flags 0x10 and data 0x8; this program adds,
// beside that record, a second one as another compiler's translation unit would carry it
// (`unified_shared_memory` and `unified_address`), placed in the entry section the offload
// wrapper collects. LLVM 19 stops at registration: fatal error 2, the first clause in its
// order (reverse_offload, unified_address, unified_shared_memory, dynamic_allocators) that
// differs.
#include <stdint.h>
#include <stdio.h>

#pragma omp requires unified_shared_memory

struct offload_entry {
  void *addr;
  const char *name;
  uint64_t size;
  int32_t flags;
  int32_t data;
};
// (Its address field points at itself: clang's records carry 0 there, which only tells the
// layouts of two LLVM versions apart when the record comes first, as this one does.)
__attribute__((used, section("omp_offloading_entries"))) static struct offload_entry
    other_unit = {&other_unit, "", 0, 0x10, 0x8 | 0x4};

int main(void) {
  int x = 0;
#pragma omp target map(tofrom : x)
  x = 1;
  printf("not reached: x=%d\n", x);
  return 0;
}
