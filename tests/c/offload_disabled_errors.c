// ENV: OMP_TARGET_OFFLOAD=DISABLED
// STDERR
// With offloading disabled, constructs that would be errors on a device
// (present on unmapped data, extending a mapping, a bad device number in
// a device clause) are executed on the host without any diagnostic.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int x = 1;
  int a[8] = {0};
#pragma omp target map(present, tofrom : x)
  { x++; }
  printf("present on unmapped: x=%d\n", x);
#pragma omp target enter data map(to : a[0:4])
#pragma omp target map(tofrom : a[0:8])
  { a[7] = 7; }
  printf("extension: a[7]=%d\n", a[7]);
#pragma omp target device(7) map(tofrom : x)
  { x += 10; }
  printf("device(7): x=%d\n", x);
#pragma omp target update to(present : x)
  printf("update present: ok\n");
  printf("%s\n", (x == 12 && a[7] == 7) ? "PASS" : "FAIL");
  return 0;
}
