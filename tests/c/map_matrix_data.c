// GPU-TIMEOUT-S: 300 (thousands of cases of tens of 4-byte copies each, and a child process per construct that starts the GPU afresh; not yet measured on one)
// STDERR
// The mapping-rules matrix (map_matrix.h) for `target data`: map types alloc, to, from and
// tofrom, each bare and with always, close, present, always+present, ompx_hold and
// always+ompx_hold, against every prior state of buf and every section; observed inside the
// region (mid) and after its end.
#include "map_matrix.h"

#define DEF(ID, ...) MM_DATA(ID, __VA_ARGS__)
#define ROW(ID, ...) {"data " #__VA_ARGS__, ID, K_MAP, mm_buf_items},
MM_MODS_DATA(DEF, data, alloc)
MM_MODS_DATA(DEF, data, to)
MM_MODS_DATA(DEF, data, from)
MM_MODS_DATA(DEF, data, tofrom)
static const mm_construct cases[] = {MM_MODS_DATA(ROW, data, alloc) MM_MODS_DATA(ROW, data, to)
                                         MM_MODS_DATA(ROW, data, from) MM_MODS_DATA(ROW, data, tofrom)};

MM_BUF_MAIN(cases, mm_buf_sections, NULL, NULL)
