// ENV: LIBOMPTARGET_INFO=0x10
// STDERR
// LIBOMPTARGET_INFO is decimal (std::stoi, as LLVM 19 reads it): `0x10` is 0, so nothing is
// printed (before, ours read it as hex and printed the kernel launch line).
#include <stdio.h>

int main(void) {
  int x = 1;
#pragma omp target map(tofrom : x)
  x++;
  printf("x=%d\n", x);
  return x != 2;
}
