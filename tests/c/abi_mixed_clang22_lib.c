// ONLY: clang19
// SHARED-LIB: abi_mixed_lib.c clang22
// ORACLE: llvm22 (LLVM 22's runtime, under both names, serves both ABIs; LLVM 19's cannot read a clang-22 image)
// A clang-19 program with a clang-22 library: both ABIs in one process, on one runtime and
// one device table (the ABI is decided per registered image).
#include "abi_mixed_body.h"
