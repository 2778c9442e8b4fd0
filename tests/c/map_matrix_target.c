// GPU-TIMEOUT-S: 300 (thousands of cases of tens of 4-byte copies each, and a child process per construct that starts the GPU afresh; not yet measured on one)
// STDERR
// The mapping-rules matrix (map_matrix.h) for target regions: an explicit map of types alloc,
// to, from and tofrom, each bare and with always, close, present, always+present, ompx_hold and
// always+ompx_hold; the whole array used without a map clause (implicitly tofrom, which may
// extend a mapping); a pointer into the array used without a map clause (a zero-length section
// of its pointee). The kernel records what it reads (k=) and writes what it maps.
#include "map_matrix.h"

// buf used without a map clause: implicitly map(tofrom: buf), the whole array. The kernel
// touches only the elements a prior mapping covers (an implicit map may extend a mapping,
// which then holds only those).
static void target_implicit(char *line, size_t cap) {
  (void)line; (void)cap;
  int lo = mm.plen ? mm.plo : 0, len = mm.plen ? mm.plen : MM_CAP, k0 = mm_value(TAG_K, 0, 0);
#pragma omp target map(tofrom : seen[0:MM_CAP])
  for (int i = lo; i < lo + len; i++) {
    MM_SEE(i, buf[i]);
    buf[i] = k0 | i;
  }
}

// A pointer to &buf[lo] used without a map clause: a zero-length section of its pointee
// (OpenMP 5.2 §5.8.3). Prints what the kernel's pointer is: the device address of element k
// (dev@k), null, or the host address.
static void target_implicit_ptr(char *line, size_t cap) {
  int *q = &buf[mm.lo];
  uintptr_t got = 0;
#pragma omp target map(from : got)
  got = (uintptr_t)q;
  char what[32];
  mm_where(what, sizeof what, got, 0, mm.lo);
  mm_append(line, cap, " | ptr=%s", what);
}

#define DEF(ID, ...) MM_TARGET(ID, __VA_ARGS__)
#define ROW(ID, ...) {"target " #__VA_ARGS__, ID, K_MAP, mm_buf_items},
MM_MODS_DATA(DEF, target, alloc)
MM_MODS_DATA(DEF, target, to)
MM_MODS_DATA(DEF, target, from)
MM_MODS_DATA(DEF, target, tofrom)
static const mm_construct cases[] = {
    MM_MODS_DATA(ROW, target, alloc) MM_MODS_DATA(ROW, target, to) MM_MODS_DATA(ROW, target, from)
        MM_MODS_DATA(ROW, target, tofrom)
    {"target implicit buf", target_implicit, K_MOVE, mm_no_items},
    {"target implicit &buf[lo]", target_implicit_ptr, K_MOVE, mm_no_items},
};

// The implicit whole-array map names no section: one case per prior state.
static int applicable(const mm_construct *c, int s) {
  return c->run != target_implicit || s == 0;
}

MM_BUF_MAIN(cases, mm_buf_sections, applicable, NULL)
