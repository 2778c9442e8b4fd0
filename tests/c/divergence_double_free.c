// DIVERGENCE: omp_target_free of a block freed already is refused with a message; LLVM 19 frees it again and its memory manager then hands the same block out twice
// OURS-STDERR: omptarget error: omp_target_free: 0xADDR is not a block omp_target_alloc gave out on device 0, or it was freed already: not freed
// OURS-STDERR: omptarget error: omp_target_free: 0xADDR is not a block omp_target_alloc gave out on the initial device (...
#include <omp.h>
#include <stdio.h>

int main(void) {
  int dev = 0;
  void *a = omp_target_alloc(64, dev);
  omp_target_free(a, dev);
  omp_target_free(a, dev); /* the second free */
  void *b = omp_target_alloc(64, dev);
  void *c = omp_target_alloc(64, dev);
  printf("two live blocks are distinct: %d\n", b != c);
  omp_target_free(b, dev);
  omp_target_free(c, dev);
  /* The same on the initial device (LLVM 19: glibc's "double free detected"). */
  int host = omp_get_initial_device();
  void *h = omp_target_alloc(64, host);
  omp_target_free(h, host);
  printf("host block freed once\n");
  fflush(stdout);
  omp_target_free(h, host);
  printf("second free of the host block refused\n");
  return 0;
}
