// STATUS: signal 6
// ONLY: clang22 (LLVM 19 lacks the routine)
// STDERR
// omp_target_is_accessible with a device number that names no device: LLVM 22 ends the program
// with its "invalid value" fatal error (OpenMP 5.1 §3.8.4 restricts device_num to conforming
// device numbers), after answering 0 for a null pointer whatever the device.
#include <omp.h>
#include <stdio.h>

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  int x = 0;
  int n = omp_get_num_devices();
  printf("null pointer, no such device: %d\n", omp_target_is_accessible(NULL, 4, n + 3));
  printf("no such device: %d\n", omp_target_is_accessible(&x, sizeof x, n + 3));
  return 0;
}
