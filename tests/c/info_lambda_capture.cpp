// ENV: LIBOMPTARGET_INFO=34
// STDERR
// CFLAGS: -g
// A C++ lambda that captures by reference, called in a target region (OpenMP 5.2 §5.8.3:
// the pointers to captured variables inside the device copy of the lambda point at their
// device copies). LIBOMPTARGET_INFO 0x02 and 0x20 show it as LLVM 19 does: each captured
// variable looked up, then the device address written into the lambda's device copy, that
// copy named after the captured variable's mapping.
#include <cstdio>
#include <omp.h>

int main() {
  int scale = 3;
  double acc[4] = {1, 2, 3, 4};
  auto body = [&](int i) { acc[i] *= scale; };
#pragma omp target map(tofrom : acc) map(to : scale)
  {
    for (int i = 0; i < 4; ++i) body(i);
  }
  std::printf("acc = %.0f %.0f %.0f %.0f\n", acc[0], acc[1], acc[2], acc[3]);
  return 0;
}
