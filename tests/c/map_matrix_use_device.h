// The use_device_ptr / use_device_addr constructs of the mapping-rules matrix (map_matrix.h):
// a pointer to &buf[lo] and the section buf[lo:len] translated to device addresses, alone and
// with a map of the section on the same construct; each case prints where the translated
// address points (use=dev@k: element k's device copy; host: the address it had). A lookup
// that finds no mapping keeps the address (OpenMP 5.2 §5.4.8, §5.4.10), where LLVM 19 gives
// null: those cases are divergence_use_device_unmapped.c, the others map_matrix_use_device.c.
#include "map_matrix.h"

static void report(char *line, size_t cap, uintptr_t got) {
  char what[32];
  mm_where(what, sizeof what, got, 0, mm.lo);
  mm_append(line, cap, " | use=%s", what);
}

static void use_ptr(char *line, size_t cap) {
  int *q = &buf[mm.lo];
  uintptr_t got = 0;
#pragma omp target data use_device_ptr(q)
  got = (uintptr_t)q;
  report(line, cap, got);
}

static void use_addr(char *line, size_t cap) {
  int lo = mm.lo, len = mm.len;
  uintptr_t got = 0;
#pragma omp target data use_device_addr(buf[lo:len])
  got = (uintptr_t)&buf[lo];
  report(line, cap, got);
}

static void use_addr_array(char *line, size_t cap) {
  uintptr_t got = 0;
#pragma omp target data use_device_addr(buf)
  got = (uintptr_t)&buf[mm.lo];
  report(line, cap, got);
}

static void map_use_ptr(char *line, size_t cap) {
  int lo = mm.lo, len = mm.len;
  int *q = &buf[lo];
  uintptr_t got = 0;
#pragma omp target data map(to : buf[lo:len]) use_device_ptr(q)
  {
    got = (uintptr_t)q;
    // Measured while the construct's own mapping exists.
    report(line, cap, got);
  }
}

static void map_use_addr(char *line, size_t cap) {
  int lo = mm.lo, len = mm.len;
  uintptr_t got = 0;
#pragma omp target data map(to : buf[lo:len]) use_device_addr(buf[lo:len])
  {
    got = (uintptr_t)&buf[lo];
    report(line, cap, got);
  }
}

// A device pointer used by a kernel (is_device_ptr): the kernel writes element lo through it
// when it is the device copy of that element.
static void use_ptr_kernel(char *line, size_t cap) {
  int *q = &buf[mm.lo];
  uintptr_t got = 0;
  int k = mm_value(TAG_K, 0, mm.lo);
  uintptr_t expect = (uintptr_t)mm_mapped(0, mm.lo);
#pragma omp target data use_device_ptr(q)
  {
    got = (uintptr_t)q;
    if (expect && got == expect) {
#pragma omp target is_device_ptr(q)
      q[0] = k;
    }
  }
  report(line, cap, got);
}

// What each construct looks up: &buf[lo] for a pointer to it; buf itself for
// use_device_addr of buf or of a section of it (clang passes the array).
static void at_lo(mm_spans *out) { mm_add(out, &buf[mm.lo], 0, &buf[mm.lo]); }
static void at_base(mm_spans *out) { mm_add(out, buf, 0, buf); }

static const mm_construct use_device_cases[] = {
    {"data use_device_ptr(&buf[lo])", use_ptr, K_MOVE, mm_no_items, at_lo},
    {"data use_device_addr(buf[lo:len])", use_addr, K_MOVE, mm_no_items, at_base},
    {"data use_device_addr(buf)", use_addr_array, K_MOVE, mm_no_items, at_base},
    {"data map(to) use_device_ptr", map_use_ptr, K_MAP, mm_buf_items, at_lo},
    {"data map(to) use_device_addr", map_use_addr, K_MAP, mm_buf_items, at_lo},
    {"data use_device_ptr + kernel", use_ptr_kernel, K_MOVE, mm_no_items, at_lo},
};

