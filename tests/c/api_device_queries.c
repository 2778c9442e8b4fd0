// Device-query API routines called on the host and inside target regions.
// STATUS(gpu): signal 6 (device 2 does not exist beside one GPU: LLVM 19 and ours end with
// the same fatal error there)
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int ndev = omp_get_num_devices();
  int init = omp_get_initial_device();
  int def = omp_get_default_device();
  int is_init = omp_is_initial_device();
  printf("host: num_devices=%d initial_device=%d default_device=%d is_initial=%d\n",
         ndev, init, def, is_init);
  if (ndev < 1 || is_init != 1 || def != 0) errors++;
  if (init != ndev) errors++; /* initial device number == number of devices */

  int in_is_init = -1;
#pragma omp target map(from : in_is_init)
  { in_is_init = omp_is_initial_device(); }
  printf("region default device: is_initial=%d\n", in_is_init);
  if (in_is_init != 0) errors++;

  for (int d = 0; d < ndev; ++d) {
    int v = -1;
#pragma omp target device(d) map(from : v)
    { v = omp_is_initial_device(); }
    printf("region device(%d): is_initial=%d\n", d, v);
    if (v != 0) errors++;
  }

  /* a region on the initial device runs on the host */
  int v = -1;
#pragma omp target device(init) map(from : v)
  { v = omp_is_initial_device(); }
  printf("region device(initial): is_initial=%d\n", v);
  if (v != 1) errors++;

  /* changing the default device */
  omp_set_default_device(2);
  printf("after set_default_device(2): default_device=%d\n", omp_get_default_device());
  if (omp_get_default_device() != 2) errors++;
  int x = 5;
#pragma omp target enter data map(to : x)
  printf("x present on 2: %d, on 0: %d\n", omp_target_is_present(&x, 2),
         omp_target_is_present(&x, 0));
  if (!omp_target_is_present(&x, 2) || omp_target_is_present(&x, 0)) errors++;
#pragma omp target exit data map(release : x)
  omp_set_default_device(0);

  printf("%s\n", errors == 0 ? "PASS" : "FAIL");
  return 0;
}
