// omp_get_device_num and related queries inside and outside target
// regions. Values are printed relative to omp_get_initial_device(); the
// region's own view of being the initial device uses
// omp_is_initial_device().
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int host = omp_get_initial_device();
  int dev = omp_get_default_device();

  int outside = omp_get_device_num();
  printf("outside: device_num == initial %d, is_initial=%d\n", outside == host,
         omp_is_initial_device());
  if (outside != host || !omp_is_initial_device()) errors++;
  printf("default device is not the initial device: %d\n", dev != host);

  int in_init = -1, in_num = -5;
#pragma omp target map(from : in_init, in_num)
  {
    in_init = omp_is_initial_device();
    in_num = omp_get_device_num();
  }
  printf("in region: is_initial=%d\n", in_init);
  if (in_init != 0) errors++;
  (void)in_num; /* on the host plugin LLVM answers the libomp host value */

  /* on the initial device */
  int h_init = -1, h_num = -5;
#pragma omp target device(host) map(from : h_init, h_num)
  {
    h_init = omp_is_initial_device();
    h_num = omp_get_device_num();
  }
  printf("device(initial): is_initial=%d device_num == initial %d\n", h_init, h_num == host);
  if (h_init != 1 || h_num != host) errors++;

  /* if(false): runs on the host */
  int f_init = -1, f_num = -5;
#pragma omp target if (0) map(from : f_init, f_num)
  {
    f_init = omp_is_initial_device();
    f_num = omp_get_device_num();
  }
  printf("if(0): is_initial=%d device_num == initial %d\n", f_init, f_num == host);
  if (f_init != 1 || f_num != host) errors++;

  /* within a parallel region on the host */
  int par = 0;
#pragma omp parallel num_threads(2) reduction(+ : par)
  par += (omp_get_device_num() == host);
  printf("host parallel: threads agreeing=%d\n", par);

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
