// STATUS: signal 6
// STDERR
// omp_target_is_present with device number 7 (out of range): fatal error.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int x = 0;
  printf("is_present on device 4 (initial device)=%d\n", omp_target_is_present(&x, 4));
  printf("about to call omp_target_is_present(&x, 7)\n");
  fflush(stdout);
  int r = omp_target_is_present(&x, 7);
  printf("unreachable: %d\n", r);
  return 0;
}
