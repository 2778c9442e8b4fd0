// STDERR
// The mapping-rules matrix (map_matrix.h) for `target update`: to and from, with and without
// the present motion modifier, against every prior state of buf and every section. A section
// not inside a mapping moves nothing, or is an error with present (a child process).
#include "map_matrix.h"

#define MOTIONS(X)                                                                              \
  X(update_to, to(buf[lo:len]))                                                                 \
  X(update_to_present, to(present : buf[lo:len]))                                               \
  X(update_from, from(buf[lo:len]))                                                             \
  X(update_from_present, from(present : buf[lo:len]))
#define DEF(ID, ...) MM_UPDATE(ID, __VA_ARGS__)
#define ROW(ID, ...) {"update " #__VA_ARGS__, ID, K_MOVE, mm_buf_items},
MOTIONS(DEF)
static const mm_construct cases[] = {MOTIONS(ROW)};

MM_BUF_MAIN(cases, mm_buf_sections, NULL, NULL)
