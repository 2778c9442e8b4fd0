// ENV: LIBOMPTARGET_INFO=1abc
// STDERR
// LIBOMPTARGET_INFO is read as LLVM 19 reads it (std::stoi): `1abc` is 1, so the kernel's
// arguments are listed (before, ours ignored the value).
#include <stdio.h>

int main(void) {
  int x = 1;
#pragma omp target map(tofrom : x)
  x++;
  printf("x=%d\n", x);
  return x != 2;
}
