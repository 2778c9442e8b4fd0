// STDERR
// DIVERGENCE(clang19): use_device_ptr / use_device_addr of data that is not mapped must keep the address (OpenMP 5.2 §5.4.8, §5.4.10); LLVM 19 makes it null (LLVM 22 keeps it)
// The cases of the mapping-rules matrix for use_device_ptr and use_device_addr
// (map_matrix_use_device.h) whose lookup finds no mapping: not mapped at all, past the end of
// a mapping, before an association. Inside the region the list item keeps the address it had
// (use=host; null+N where it was null).
#include "map_matrix_use_device.h"

MM_BUF_MAIN(use_device_cases, mm_buf_sections, NULL, mm_returns_not_found)
