// GPU-TIMEOUT-S: 300 (as map_matrix_enter.c, whose cases these are)
// STDERR
// map_matrix_enter.c with each `target enter data` construct `nowait` (a deferred target
// task) and a `taskwait` after it: the asynchronous form follows the same rules, case by case.
#define MM_NOWAIT
#include "map_matrix_enter.c"
