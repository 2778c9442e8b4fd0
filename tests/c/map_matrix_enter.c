// GPU-TIMEOUT-S: 300 (thousands of cases of tens of 4-byte copies each, and a child process per construct that starts the GPU afresh; not yet measured on one)
// STDERR
// The mapping-rules matrix (map_matrix.h) for `target enter data`: map types alloc and to,
// each bare and with always, close, present and always+present, against every prior state of
// buf and every section. Errors (present on data that is not mapped, an extension) run in
// child processes; their messages are compared.
#include "map_matrix.h"

#define DEF(ID, ...) MM_ENTER(ID, __VA_ARGS__)
#define ROW(ID, ...) {"enter " #__VA_ARGS__, ID, K_MAP, mm_buf_items},
MM_MODS_ENTER(DEF, enter, alloc)
MM_MODS_ENTER(DEF, enter, to)
static const mm_construct cases[] = {MM_MODS_ENTER(ROW, enter, alloc) MM_MODS_ENTER(ROW, enter, to)};

MM_BUF_MAIN(cases, mm_buf_sections, NULL, NULL)
