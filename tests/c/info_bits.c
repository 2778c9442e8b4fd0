// ENV: LIBOMPTARGET_INFO=40
// STDERR
// LIBOMPTARGET_INFO is parsed as a decimal integer: 40 = 8 (mapping table
// entry changes) + 32 (data transfers). Only those two kinds of lines are
// printed (no kernel-argument lists, no table dumps, no plugin lines).
#include <omp.h>
#include <stdio.h>

int main(void) {
  int a[4] = {1, 2, 3, 4};
  double d = 0.5;
#pragma omp target data map(tofrom : a)
  {
#pragma omp target map(tofrom : d)
    {
      d *= a[3];
      a[0] = 9;
    }
#pragma omp target update from(a[0:1])
  }
  printf("d=%.1f a[0]=%d\n", d, a[0]);
  printf("%s\n", (d == 2.0 && a[0] == 9) ? "PASS" : "FAIL");
  return 0;
}
