// ONLY: clang19 (under clang 22, api_target_is_accessible.c and err_target_is_accessible_device.c)
// DIVERGENCE: LLVM 19's libraries do not provide omp_target_is_accessible (OpenMP 5.1 §3.8.4 / 5.2 §18.8.4)
// omp_target_is_accessible(ptr, size, device): whether a device can access host
// memory directly. Looked up at run time, so the program links against either
// library; under LLVM 19 the routine is missing and the program says so, which
// the harness requires (the expected output follows the specification).
// The answers printed do not depend on the device kind: the initial device
// always has access, an invalid device number has none, null has none, and
// memory from llvm_omp_target_alloc_shared is accessible from its device. For
// ordinary host memory on a device the answer depends on the hardware (a
// host-plugin device or a GPU with pageable memory access says yes), so only
// its consistency over a range is printed.
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*is_accessible_t)(const void *, size_t, int);
void *llvm_omp_target_alloc_shared(size_t, int);
void llvm_omp_target_free_shared(void *, int);

int main(void) {
  is_accessible_t f = (is_accessible_t)dlsym(RTLD_DEFAULT, "omp_target_is_accessible");
  if (!f) {
    printf("omp_target_is_accessible: not provided\n");
    return 0;
  }
  int errors = 0;
  int host = omp_get_initial_device();
  int dev = omp_get_default_device();
  int n = omp_get_num_devices();
  static double buf[1024];

  int r1 = f(buf, sizeof buf, host);
  printf("initial device: %d\n", r1);
  errors += r1 != 1;

  int r2 = f(buf, sizeof buf, n + 5);
  printf("invalid device number: %d\n", r2);
  errors += r2 != 0;

  int r3 = n > 0 ? f(NULL, 8, dev) : 0;
  printf("null pointer: %d\n", r3);
  errors += r3 != 0;

  if (n > 0) {
    double *shared = llvm_omp_target_alloc_shared(4096, dev);
    int r4 = shared ? f(shared, 4096, dev) : -1;
    printf("shared allocation on its device: %d\n", r4);
    errors += r4 != 1;
    llvm_omp_target_free_shared(shared, dev);

    int whole = f(buf, sizeof buf, dev);
    int first = f(buf, sizeof(double), dev);
    int answers = (whole == 0 || whole == 1) && whole == first;
    printf("host memory on device: consistent answer %d\n", answers);
    errors += !answers;
  } else {
    printf("shared allocation on its device: 1\nhost memory on device: consistent answer 1\n");
  }
  printf("%s (errors=%d)\n", errors ? "FAIL" : "PASS", errors);
  return errors != 0;
}
