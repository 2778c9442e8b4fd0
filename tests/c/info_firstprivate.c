// ENV: LIBOMPTARGET_INFO=32
// STDERR
// First-private arrays and structs (OpenMP 5.2 §5.4.4: each region gets its own copy,
// initialised from the original) travel as LLVM 19's runtime sends them, which
// LIBOMPTARGET_INFO=32 shows: those of at most 1024 bytes packed into one block with one copy
// (with LLVM's padding between them), a larger one in a copy of its own. The device copies
// are private: writes to them never reach the host. (Compiled without -g: copies that are not
// into a mapping are named after whatever entry LLVM's lookup of the source lands on.)
#include <omp.h>
#include <stdio.h>
#include <string.h>

struct Small {
  char tag;
  short s;
  int i;
};
struct Big {
  double v[200];
};

int main(void) {
  int a[3] = {1, 2, 3};
  double d[2] = {0.5, 1.5};
  struct Small s = {'x', 7, 9};
  char c[5] = "abcd";
  struct Big big;
  for (int i = 0; i < 200; ++i) big.v[i] = i;
  long r = 0;
#pragma omp target firstprivate(a, d, s, c, big) map(tofrom : r)
  {
    r = a[2] + (long)(d[1] * 2) + s.tag + s.s + s.i + c[3] + (long)big.v[199];
    a[0] = 100;
    big.v[0] = -1;
  }
  printf("r=%ld a[0]=%d big.v[0]=%.0f\n", r, a[0], big.v[0]);

  /* only one small array: one packed copy of its size */
  int one[4] = {4, 3, 2, 1};
#pragma omp target firstprivate(one) map(tofrom : r)
  { r = one[0] * one[3]; }
  printf("r=%ld\n", r);

  /* private (not first-private) data is not copied */
  int scratch[16];
  memset(scratch, 0, sizeof scratch);
#pragma omp target private(scratch) map(tofrom : r)
  {
    for (int i = 0; i < 16; ++i) scratch[i] = i;
    r = scratch[15];
  }
  printf("r=%ld scratch[15]=%d\n", r, scratch[15]);
  return 0;
}
