// STDERR
// DIVERGENCE: a struct member's `delete` on an entry held by ompx_hold without dynamic references gives it one (LLVM's resetRefCount sets the count to 1 for the struct's item to release, which finds no mapping), so the entry outlives its hold; a delete sets the count to zero (OpenMP 5.2 §5.8.3)
// The cases of the struct matrix (map_matrix_struct.h) where `target exit data
// map(delete: s.a, s.b)` or `map(delete: s, s.b[1:2])` meets s.b mapped by an enclosing
// `target data map(ompx_hold, tofrom: s.b)`: the combined item of s extends s.b's entry and
// is ignored, the member s.b is found. When the hold ends, s.b is unmapped (post d=.....)
// and copied back; under LLVM it stays mapped with a dynamic count of 1 (r=.....1111).
#include "map_matrix_struct.h"

int main(int argc, char **argv) { return struct_main(argc, argv, held_member_delete); }
