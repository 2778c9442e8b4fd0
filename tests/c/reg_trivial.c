// Registration: the simplest possible program with one target region.
// The region writes a value computed on the device back through an
// explicit map(from:).
#include <omp.h>
#include <stdio.h>

int main(void) {
  int v = 0;
#pragma omp target map(from : v)
  { v = 6 * 7; }
  printf("v=%d\n", v);
  printf("%s\n", v == 42 ? "PASS" : "FAIL");
  return 0;
}
