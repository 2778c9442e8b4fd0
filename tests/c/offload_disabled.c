// ENV: OMP_TARGET_OFFLOAD=DISABLED
// DIVERGENCE(clang19): LLVM 19 still counts its plugins' devices when offloading is disabled; OpenMP 5.2 §21.2.8 says the behaviour is then as if the only device were the host (0 devices), as LLVM 22 does
// With offloading disabled, target regions execute on the host and map
// clauses do not create device copies.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  /* 0 devices: the host is the only device (LLVM 19 still reported its plugins' devices) */
  printf("num_devices=%d initial_device=%d default_device=%d\n", omp_get_num_devices(),
         omp_get_initial_device(), omp_get_default_device());
  int in = -1;
  int a[4] = {1, 2, 3, 4};
#pragma omp target map(from : in) map(to : a)
  {
    in = omp_is_initial_device();
    a[0] = 100; /* host memory: visible after the region even with map(to) */
  }
  printf("is_initial_device in region=%d a[0]=%d\n", in, a[0]);
  if (in != 1 || a[0] != 100) errors++;

  int dev1 = -1;
#pragma omp target device(1) map(from : dev1)
  { dev1 = omp_is_initial_device(); }
  printf("device(1) region is_initial=%d\n", dev1);
  if (dev1 != 1) errors++;

  int x = 5;
#pragma omp target enter data map(to : x)
  printf("present after enter data=%d\n", omp_target_is_present(&x, omp_get_default_device()));
#pragma omp target
  { x = 6; }
  /* x was firstprivate in the region: host keeps 5 */
  printf("x=%d\n", x);
#pragma omp target exit data map(from : x)
  if (x != 5) errors++;

  long s = 0;
#pragma omp target teams distribute parallel for reduction(+ : s) map(tofrom : s)
  for (int i = 0; i < 1000; ++i) s += i;
  printf("reduction s=%ld\n", s);
  if (s != 499500) errors++;

  /* device 0 is the initial device when there are no devices: host memory */
  void *p = omp_target_alloc(64, 0);
  printf("omp_target_alloc on device 0: %s\n", p ? "non-null" : "NULL");
  omp_target_free(p, 0);

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
