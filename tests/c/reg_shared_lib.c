// SHARED-LIB: reg_shared_lib_lib.c
// Registration of two images: the executable and a shared library both
// contain target regions; the library also has declare target globals.
#include <omp.h>
#include <stdio.h>

int lib_scale(int x);
int lib_bump_device(void);
void lib_pull_counter(void);
int lib_get_host_counter(void);
extern int lib_counter;

#pragma omp declare target
int main_global = 7;
#pragma omp end declare target

int main(void) {
  int errors = 0;
  int r = 0;
#pragma omp target map(from : r)
  { r = main_global + 1; }
  printf("main region: r=%d\n", r);
  if (r != 8) errors++;

  int s = lib_scale(5);
  printf("lib region: lib_scale(5)=%d\n", s);
  if (s != 15) errors++;

  int d1 = lib_bump_device();
  int d2 = lib_bump_device();
  printf("lib device counter: %d %d\n", d1, d2);
  if (d1 != 101 || d2 != 102) errors++;
  printf("lib host counter before update: %d\n", lib_get_host_counter());
  if (lib_get_host_counter() != 100) errors++;
  lib_pull_counter();
  printf("lib host counter after update: %d\n", lib_get_host_counter());
  if (lib_counter != 102) errors++;

  /* the executable can also update the library's global directly */
  lib_counter = 500;
#pragma omp target update to(lib_counter)
  int d3 = lib_bump_device();
  printf("lib device counter after update to: %d\n", d3);
  if (d3 != 501) errors++;

  printf("%s\n", errors == 0 ? "PASS" : "FAIL");
  return 0;
}
