// GPU-TIMEOUT-S: 300 (thousands of cases of tens of 4-byte copies each, and a child process per construct that starts the GPU afresh; not yet measured on one)
// STDERR
// The mapping-rules matrix (map_matrix.h) for constructs with two items on buf: the order in
// which one construct's items enter and leave (the first creates a mapping the second finds,
// extends or shares; at exit the items are released last to first), for enter data, exit data,
// target data, target regions and target update, against every prior state of buf. Clang
// refuses two sections of one array in a target region's or an update's clauses, so the second
// names buf through a pointer there.
#include "map_matrix.h"

// Each pair: (map type of the first item), (map type of the second).
#define MM_ENTER2(ID, T1, T2)                                                                   \
  static void ID(char *line, size_t cap) {                                                      \
    (void)line; (void)cap;                                                                      \
    int lo = mm.lo, len = mm.len, lo2 = mm.lo2, len2 = mm.len2;                                 \
    MM_PRAGMA(omp target enter data map(MM_UNWRAP T1 : buf[lo:len])                             \
                  map(MM_UNWRAP T2 : buf[lo2:len2]))                                            \
  }
#define MM_EXIT2(ID, T1, T2)                                                                    \
  static void ID(char *line, size_t cap) {                                                      \
    (void)line; (void)cap;                                                                      \
    int lo = mm.lo, len = mm.len, lo2 = mm.lo2, len2 = mm.len2;                                 \
    MM_PRAGMA(omp target exit data map(MM_UNWRAP T1 : buf[lo:len])                              \
                  map(MM_UNWRAP T2 : buf[lo2:len2]))                                            \
  }
#define MM_DATA2(ID, T1, T2)                                                                    \
  static void ID(char *line, size_t cap) {                                                      \
    int lo = mm.lo, len = mm.len, lo2 = mm.lo2, len2 = mm.len2;                                 \
    MM_PRAGMA(omp target data map(MM_UNWRAP T1 : buf[lo:len]) map(MM_UNWRAP T2 : buf[lo2:len2])) \
    mm_inside_data(line, cap);                                                                  \
  }
#define MM_TARGET2(ID, T1, T2)                                                                  \
  static void ID(char *line, size_t cap) {                                                      \
    (void)line; (void)cap;                                                                      \
    int lo = mm.lo, len = mm.len, lo2 = mm.lo2, len2 = mm.len2, k0 = mm_value(TAG_K, 0, 0);     \
    int *alias = buf;                                                                           \
    MM_PRAGMA(omp target map(MM_UNWRAP T1 : buf[lo:len]) map(MM_UNWRAP T2 : alias[lo2:len2])    \
                  map(tofrom : seen[0:MM_CAP]))                                                 \
    {                                                                                           \
      for (int i = lo; i < lo + len; i++) {                                                     \
        MM_SEE(i, buf[i]);                                                                      \
        buf[i] = k0 | i;                                                                        \
      }                                                                                         \
      for (int i = lo2; i < lo2 + len2; i++) {                                                  \
        MM_SEE(i, alias[i]);                                                                    \
        alias[i] = k0 | i;                                                                      \
      }                                                                                         \
    }                                                                                           \
  }
#define MM_UPDATE2(ID, M)                                                                       \
  static void ID(char *line, size_t cap) {                                                      \
    (void)line; (void)cap;                                                                      \
    int lo = mm.lo, len = mm.len, lo2 = mm.lo2, len2 = mm.len2;                                 \
    int *alias = buf;                                                                           \
    MM_PRAGMA(omp target update M(buf[lo:len], alias[lo2:len2]))                                \
  }

// Clang passes one variable's items with `present` first, then those of map type alloc, then
// the rest, each group in clause order (mm_buf_items_alloc_first for a pair it swaps); items
// of different variables (buf and alias) in clause order.
static void mm_buf_items_alloc_first(mm_spans *out) {
  mm_add(out, &buf[mm.lo2], (size_t)mm.len2 * sizeof(int), buf);
  mm_add(out, &buf[mm.lo], (size_t)mm.len * sizeof(int), buf);
}

// (construct macro, word, kind, id, first map type, second map type, order of the items)
#define PAIRS(X) \
  X(ENTER2, enter, K_MAP, e_to_alloc, (to), (alloc), _alloc_first)           \
  X(ENTER2, enter, K_MAP, e_alloc_to, (alloc), (to), )                       \
  X(ENTER2, enter, K_MAP, e_to_to, (to), (to), )                             \
  X(ENTER2, enter, K_MAP, e_to_always_to, (to), (always, to), )              \
  X(EXIT2, exit, K_EXIT, x_from_release, (from), (release), )                \
  X(EXIT2, exit, K_EXIT, x_release_from, (release), (from), )                \
  X(EXIT2, exit, K_EXIT, x_from_delete, (from), (delete), )                  \
  X(EXIT2, exit, K_EXIT, x_delete_from, (delete), (from), )                  \
  X(EXIT2, exit, K_EXIT, x_from_from, (from), (from), )                      \
  X(EXIT2, exit, K_EXIT, x_always_from_release, (always, from), (release), ) \
  X(EXIT2, exit, K_EXIT, x_release_always_from, (release), (always, from), ) \
  X(DATA2, data, K_MAP, d_to_from, (to), (from), )                           \
  X(DATA2, data, K_MAP, d_from_to, (from), (to), )                           \
  X(DATA2, data, K_MAP, d_tofrom_alloc, (tofrom), (alloc), _alloc_first)     \
  X(DATA2, data, K_MAP, d_alloc_tofrom, (alloc), (tofrom), )                 \
  X(DATA2, data, K_MAP, d_hold_tofrom_to, (ompx_hold, tofrom), (to), )       \
  X(DATA2, data, K_MAP, d_to_always_from, (to), (always, from), )            \
  X(TARGET2, target, K_MAP, t_to_from, (to), (from), )                       \
  X(TARGET2, target, K_MAP, t_from_to, (from), (to), )                       \
  X(TARGET2, target, K_MAP, t_alloc_tofrom, (alloc), (tofrom), )             \
  X(TARGET2, target, K_MAP, t_tofrom_alloc, (tofrom), (alloc), )             \
  X(TARGET2, target, K_MAP, t_hold_to_from, (ompx_hold, to), (from), )
#define DEF(M, W, K, ID, T1, T2, ORDER) MM_##M(ID, T1, T2)
#define ROW(M, W, K, ID, T1, T2, ORDER)                                                         \
  {#W " " MM_STR(MM_UNWRAP T1) " + " MM_STR(MM_UNWRAP T2), ID, K, mm_buf_items##ORDER},
PAIRS(DEF)
MM_UPDATE2(u_to, to)
MM_UPDATE2(u_from, from)
static const mm_construct cases[] = {PAIRS(ROW){"update to + to", u_to, K_MOVE, mm_buf_items},
                                     {"update from + from", u_from, K_MOVE, mm_buf_items}};

// {lo, len, lo2, len2}
static const mm_section sections[] = {
    {0, 12, 4, 4}, // enclosing, then inside it
    {4, 4, 0, 12}, // inside, then enclosing it
    {4, 4, 4, 4},  // the same section twice
    {4, 4, 6, 4},  // overlapping
    {0, 2, 4, 4},  // disjoint
    {4, 4, 5, 0},  // then zero-length inside it
    {5, 0, 4, 4},  // zero-length, then a section around it
    {4, 4, 8, 0},  // then zero-length at its end
};

MM_BUF_MAIN(cases, sections, NULL, NULL)
