// ENV: LIBOMPTARGET_INFO=15
// STDERR
// CFLAGS: -g
// With -g, clang passes each construct's location and each map clause's name (with the
// source's full path, as the harness compiles it). LIBOMPTARGET_INFO prints them as LLVM 19
// does: the file's base name (`at info_locations_names.c:LINE:COL`), variable names as written
// in the clause, and `declare target` globals under their symbol name at `unknown:0:0` in
// the table dump (bits 0x01 arguments, 0x02 existing mappings, 0x04 table dumps, 0x08
// mapping changes), and ompx_dump_mapping_tables names its own location `libomptarget:0:0`
// (its output, on stdout, is sent to stderr so that its addresses are normalised).
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

void ompx_dump_mapping_tables(void);

int counter = 3;
double table[4] = {1, 2, 3, 4};
#pragma omp declare target(counter, table)

struct Pair {
  int a;
  int b[3];
};

int main(void) {
  int x = 1;
  int arr[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  struct Pair p = {1, {2, 3, 4}};
#pragma omp target enter data map(to : arr[2:4], p.b)
#pragma omp target data map(tofrom : x)
  {
#pragma omp target map(tofrom : arr[2:4]) map(to : p.b[0:2])
    {
      x += counter + (int)table[3] + arr[5] + p.b[1];
      arr[2] = x;
    }
  }
#pragma omp target exit data map(from : arr[2:4]) map(release : p.b)
  printf("x=%d arr[2]=%d\n", x, arr[2]);
  fflush(stdout);
#pragma omp target enter data map(to : x)
  dup2(2, 1);
  ompx_dump_mapping_tables();
  fflush(stdout);
#pragma omp target exit data map(release : x)
  return 0;
}
