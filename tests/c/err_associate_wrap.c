// STATUS: signal 6
// STDERR
// omp_target_associate_ptr whose device_ptr + device_offset wraps around to address 0: the
// association is accepted (as LLVM 19 does) and a region that maps the array stops with LLVM's
// fatal error instead of launching with a null device pointer.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

int main(void) {
  int a[4] = {1, 2, 3, 4};
  int rc = omp_target_associate_ptr(a, (void *)(uintptr_t)16, sizeof a, SIZE_MAX - 15, 0);
  printf("associate rc=%d present=%d\n", rc, omp_target_is_present(a, 0));
  fflush(stdout);
#pragma omp target map(tofrom : a) device(0)
  { a[0] = 42; }
  printf("not reached: a[0]=%d\n", a[0]);
  return 0;
}
