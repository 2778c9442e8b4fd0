// STATUS: signal 6
// ENV: LIBOMPTARGET_INFO=4
// STDERR
// CFLAGS: -g
// A construct that fails while offloading is mandatory (a `present` map of unmapped data)
// with LIBOMPTARGET_INFO=4 and -g: the tables are dumped once, after the failing construct,
// at its location with the file's base name, and the fatal error names the same location
// (`err_location_basename.c:LINE:COL: omptarget fatal error 1: ...`), as LLVM 19 prints them.
#include <omp.h>
#include <stdio.h>

int limit = 10;
#pragma omp declare target(limit)

int main(void) {
  int a[4] = {1, 2, 3, 4};
  int b[2] = {5, 6};
#pragma omp target enter data map(to : a)
#pragma omp target map(tofrom : a)
  { a[0] += limit; }
  printf("a[0]=%d\n", a[0]);
  fflush(stdout);
#pragma omp target map(present, tofrom : b)
  { b[0] = 1; }
  printf("not reached\n");
  return 0;
}
