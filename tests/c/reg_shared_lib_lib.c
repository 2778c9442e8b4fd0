// Shared library used by reg_shared_lib.c: it carries its own offload
// image (a target region and a declare target global), registered
// separately from the main program's image.
#include <omp.h>

#pragma omp declare target
int lib_counter = 100;
int lib_table[4] = {1, 2, 3, 4};
#pragma omp end declare target

int lib_scale(int x) {
  int r = 0;
#pragma omp target map(from : r) map(to : x)
  { r = x * lib_table[2]; }
  return r;
}

/* Increment the device copy of lib_counter, return the device value. */
int lib_bump_device(void) {
  int r = 0;
#pragma omp target map(from : r)
  {
    lib_counter += 1;
    r = lib_counter;
  }
  return r;
}

void lib_pull_counter(void) {
#pragma omp target update from(lib_counter)
}

int lib_get_host_counter(void) { return lib_counter; }
