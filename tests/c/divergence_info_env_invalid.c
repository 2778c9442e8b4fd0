// ENV: LIBOMPTARGET_INFO=abc
// DIVERGENCE: a LIBOMPTARGET_INFO that is not a number is ignored with a message; LLVM 19's runtime stops (an uncaught std::invalid_argument from std::stoi)
// OURS-STDERR: omptarget message: LIBOMPTARGET_INFO='abc' is not a decimal number of int's range (LLVM 19's runtime stops here): ignored
#include <stdio.h>

int main(void) {
  int x = 1;
#pragma omp target map(tofrom : x)
  x++;
  printf("x=%d\n", x);
  return x != 2;
}
