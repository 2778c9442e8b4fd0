// llvm_omp_target_lock_mem / llvm_omp_target_unlock_mem (LLVM's extension): locking returns an
// address that can be used for the same host data; copies and regions work on locked memory;
// unlocking leaves the data intact.
#include <omp.h>
#include <stdio.h>

void *llvm_omp_target_lock_mem(void *ptr, size_t size, int device_num);
void llvm_omp_target_unlock_mem(void *ptr, int device_num);

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  static double a[256];
  for (int i = 0; i < 256; ++i) a[i] = i;
  double *locked = llvm_omp_target_lock_mem(a, sizeof a, dev);
  printf("lock returned non-null: %d\n", locked != NULL);
  errors += locked == NULL;
  printf("locked address reads the same data: %d\n", locked && locked[7] == 7.0);
#pragma omp target map(tofrom : a)
  for (int i = 0; i < 256; ++i) a[i] *= 2;
  printf("a[255] after region on locked memory: %.0f\n", a[255]);
  errors += a[255] != 510.0;
  llvm_omp_target_unlock_mem(a, dev);
  printf("a[3] after unlock: %.0f\n", a[3]);
  errors += a[3] != 6.0;
  printf("%s (errors=%d)\n", errors ? "FAIL" : "PASS", errors);
  return 0;
}
