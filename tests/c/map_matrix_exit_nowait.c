// GPU-TIMEOUT-S: 300 (as map_matrix_exit.c, whose cases these are)
// STDERR
// map_matrix_exit.c with each `target exit data` construct `nowait` (a deferred target
// task) and a `taskwait` after it: the asynchronous form follows the same rules, case by case.
#define MM_NOWAIT
#include "map_matrix_exit.c"
