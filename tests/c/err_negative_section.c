// STATUS: signal 6
// OURS-STDERR: omptarget error: map item 0 at host address 0xADDR has a negative size (-16 bytes): nothing is mapped on device 0
// A section with a negative length (`p[0:n]`, n < 0) is an error: nothing is mapped and the
// region does not run (before, ours clamped it to 0 bytes and the region wrote the host array
// directly). LLVM 19 fails too, but says it could not allocate device memory.
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int n = argc > 5 ? 4 : -4; /* -4, unknown to the compiler */
  int a[4] = {1, 2, 3, 4};
  int *p = a;
  printf("mapping p[0:%d]\n", n);
  fflush(stdout);
#pragma omp target map(tofrom : p[0 : n])
  { p[0] = 42; }
  printf("not reached: a[0]=%d present=%d\n", a[0], omp_target_is_present(a, 0));
  return 0;
}
