// GPU-TIMEOUT-S: 300 (thousands of cases of tens of 4-byte copies each, and a child process per construct that starts the GPU afresh; not yet measured on one)
// STDERR
// The mapping-rules matrix (map_matrix.h) for `target exit data`: map types from, release and
// delete, each bare and with always, close, present and always+present, against every prior
// state of buf and every section. A `present` item that is not inside a mapping is an error
// (a child process); any other such item is ignored.
#include "map_matrix.h"

#define DEF(ID, ...) MM_EXIT(ID, __VA_ARGS__)
#define ROW(ID, ...) {"exit " #__VA_ARGS__, ID, K_EXIT, mm_buf_items},
MM_MODS_ENTER(DEF, exit, from)
MM_MODS_ENTER(DEF, exit, release)
MM_MODS_ENTER(DEF, exit, delete)
static const mm_construct cases[] = {MM_MODS_ENTER(ROW, exit, from) MM_MODS_ENTER(ROW, exit, release)
                                         MM_MODS_ENTER(ROW, exit, delete)};

MM_BUF_MAIN(cases, mm_buf_sections, NULL, NULL)
