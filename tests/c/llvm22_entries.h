/* Shared by the clang-22 programs that call the runtime's entry points by hand with a region
   of their own (api_llvm22_exports.c, attach_raw.c, divergence_llvm_launch_params_host.c):
   LLVM >= 20's offload entries, in the section clang 22 names llvm_offload_entries. */
#include <stdint.h>
#include <string.h>

struct entry {
  uint64_t reserved;
  uint16_t version, kind;
  uint32_t flags;
  void *addr;
  char *name;
  uint64_t size, data;
  void *aux;
};
extern struct entry __start_llvm_offload_entries[], __stop_llvm_offload_entries[];

/* The region id (host address) of the program's kernel whose name contains `part`; NULL when
   there is none. */
static void *region_named(const char *part) {
  void *region = NULL;
  for (struct entry *e = __start_llvm_offload_entries; e < __stop_llvm_offload_entries; ++e)
    if (e->size == 0 && strstr(e->name, part)) region = e->addr;
  return region;
}
