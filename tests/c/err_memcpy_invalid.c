// STATUS: signal 6
// STDERR
// omp_target_memcpy with NULL pointers returns an error code (and prints a
// message); with an out-of-range device number it aborts.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int host = omp_get_initial_device();
  int x = 5;
  int *d = omp_target_alloc(sizeof(int), 0);
  int rc;
  rc = omp_target_memcpy(NULL, &x, sizeof x, 0, 0, 0, host);
  printf("null dst: rc=%d\n", rc);
  fflush(stdout);
  rc = omp_target_memcpy(d, NULL, sizeof x, 0, 0, 0, host);
  printf("null src: rc=%d\n", rc);
  fflush(stdout);
  rc = omp_target_memcpy(NULL, NULL, 0, 0, 0, 0, host);
  printf("null both, size 0: rc=%d\n", rc);
  fflush(stdout);
  rc = omp_target_memcpy(d, &x, sizeof x, 0, 0, 0, host);
  printf("valid: rc=%d\n", rc);
  fflush(stdout);
  printf("about to copy with dst_device=7\n");
  fflush(stdout);
  rc = omp_target_memcpy(d, &x, sizeof x, 0, 0, 7, host);
  printf("unreachable: rc=%d\n", rc);
  return 0;
}
