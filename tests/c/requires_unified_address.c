// `#pragma omp requires unified_address` (OpenMP 5.2 §8.2.1, §5.4.8-5.4.9): device and host
// share one address space, so device pointers from `use_device_ptr` and `omp_target_alloc`
// can be compared, offset and passed with `is_device_ptr` like any pointer. clang 19 records
// no requirement for this clause (LLVM 19 changes nothing for it); mapping is unchanged.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#pragma omp requires unified_address

int main(void) {
  int dev = omp_get_default_device();
  int errors = 0;
  int a[16];
  for (int i = 0; i < 16; i++)
    a[i] = i;
  int *p = a;
#pragma omp target data map(tofrom : a) use_device_ptr(p)
  {
    // p is the device address of a: offsets within it are device addresses of elements.
    int *mid = p + 8;
    printf("device pointer differs from host: %d, offset %td elements\n", p != a,
           mid - p);
#pragma omp target is_device_ptr(mid)
    for (int i = 0; i < 8; i++)
      mid[i] *= 10;
    if (p == a && omp_get_mapped_ptr(a, dev) != p)
      errors++;
    printf("mapped pointer of a is p: %d\n", omp_get_mapped_ptr(a, dev) == (void *)p);
  }
  printf("a[7]=%d a[8]=%d a[15]=%d\n", a[7], a[8], a[15]);
  if (a[7] != 7 || a[8] != 80 || a[15] != 150)
    errors++;

  // Memory from omp_target_alloc: pointer arithmetic and comparison on the host.
  double *d = omp_target_alloc(32 * sizeof(double), dev);
  double *half = d + 16;
  printf("allocation halves ordered: %d\n", (uintptr_t)half > (uintptr_t)d);
#pragma omp target is_device_ptr(d, half)
  for (int i = 0; i < 16; i++) {
    d[i] = i;
    half[i] = d[i] * 2;
  }
  double out[32];
  omp_target_memcpy(out, d, sizeof out, 0, 0, omp_get_initial_device(), dev);
  printf("out[3]=%g out[19]=%g\n", out[3], out[19]);
  if (out[3] != 3 || out[19] != 6)
    errors++;
  omp_target_free(d, dev);
  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
