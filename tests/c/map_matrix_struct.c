// GPU-TIMEOUT-S: 300 (thousands of cases of tens of 4-byte copies each, and a child process per construct that starts the GPU afresh; not yet measured on one)
// STDERR
// The mapping-rules matrix for struct members and pointer attachment (map_matrix_struct.h):
// every case but the held member deletes of divergence_member_delete_hold.c.
#include "map_matrix_struct.h"

int main(int argc, char **argv) { return struct_main(argc, argv, other_than_held_member_delete); }
