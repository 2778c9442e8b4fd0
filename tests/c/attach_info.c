// ONLY: clang22 (LLVM 22's ATTACH traces; clang 19's PTR_AND_OBJ traces differ from LLVM 19 in two lines that predate the attach rules)
// STDERR
// ENV: LIBOMPTARGET_INFO=-1
// LIBOMPTARGET_INFO traces of pointer maps: clang 22's ATTACH entries are listed as
// `attach(...)`, their lookups and the copy of the attached pointer are traced in LLVM 22's
// words; clang 19's PTR_AND_OBJ entries in LLVM 19's.
#include <omp.h>
#include <stdio.h>

struct vec {
  int n;
  int *data;
};

int main(void) {
  int d[4] = {1, 2, 3, 4};
  struct vec s = {4, d};
  int *p = d;
#pragma omp target enter data map(to : s) map(to : s.data[0:4])
#pragma omp target map(present, alloc : s)
  { s.data[1] = 20; }
#pragma omp target exit data map(from : s.data[0:4]) map(release : s)
#pragma omp target map(tofrom : p[1:2])
  { p[2] = 30; }
  printf("d = %d %d %d %d\n", d[0], d[1], d[2], d[3]);
  return 0;
}
