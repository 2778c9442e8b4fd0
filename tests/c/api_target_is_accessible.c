// ONLY: clang22 (LLVM 19 lacks the routine: divergence_target_is_accessible.c)
// DIVERGENCE(clang22): LLVM 22's host plugin answers 0 even for memory its devices can access (they run on the host), its own shared allocations included; OpenMP 5.2 §18.8.4: true when the storage is accessible from the device
// omp_target_is_accessible(ptr, size, device) in a clang-22 program: null has no access, the
// initial device (also named omp_initial_device, -1) always has, memory from
// llvm_omp_target_alloc_shared is accessible from its device, and for ordinary host memory
// the answer depends on the hardware (a host-plugin device or a GPU with pageable memory
// access says yes), so only its consistency over a range is printed. A device number that
// names no device is a fatal error, as in LLVM 22 (err_target_is_accessible_device.c).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

void *llvm_omp_target_alloc_shared(size_t, int);
void llvm_omp_target_free_shared(void *, int);

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  static double buf[1024];

  int r1 = omp_target_is_accessible(buf, sizeof buf, omp_get_initial_device());
  int r2 = omp_target_is_accessible(buf, sizeof buf, -1); /* omp_initial_device (OpenMP 5.2) */
  printf("initial device: %d, omp_initial_device: %d\n", r1, r2);
  errors += r1 != 1 || r2 != 1;

  int r3 = omp_target_is_accessible(NULL, 8, dev);
  printf("null pointer: %d\n", r3);
  errors += r3 != 0;

  double *shared = llvm_omp_target_alloc_shared(4096, dev);
  int r4 = shared ? omp_target_is_accessible(shared, 4096, dev) : -1;
  printf("shared allocation on its device: %d\n", r4);
  errors += r4 != 1;
  llvm_omp_target_free_shared(shared, dev);

  int whole = omp_target_is_accessible(buf, sizeof buf, dev);
  int first = omp_target_is_accessible(buf, sizeof(double), dev);
  int answers = (whole == 0 || whole == 1) && whole == first;
  printf("host memory on device: consistent answer %d\n", answers);
  errors += !answers;
  printf("%s (errors=%d)\n", errors ? "FAIL" : "PASS", errors);
  return errors != 0;
}
