// device(N) clause with the 4 host-plugin devices: mappings are per device.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int ndev = omp_get_num_devices();
  printf("num_devices=%d\n", ndev);
  if (ndev < 4) {
    printf("need 4 devices\n");
    return 0;
  }
  int x = 10;
#pragma omp target enter data map(to : x) device(1)
  printf("x present: dev0=%d dev1=%d dev2=%d dev3=%d\n", omp_target_is_present(&x, 0),
         omp_target_is_present(&x, 1), omp_target_is_present(&x, 2),
         omp_target_is_present(&x, 3));
  if (!omp_target_is_present(&x, 1) || omp_target_is_present(&x, 2)) errors++;

  /* a separate copy of x on device 3 */
  x = 30;
#pragma omp target enter data map(to : x) device(3)
  x = 0;
  int v1 = 0, v3 = 0;
#pragma omp target device(1) map(tofrom : x) map(from : v1)
  {
    x += 1;
    v1 = x;
  }
#pragma omp target device(3) map(tofrom : x) map(from : v3)
  {
    x += 3;
    v3 = x;
  }
  printf("device(1) x=%d device(3) x=%d host x=%d\n", v1, v3, x);
  if (v1 != 11 || v3 != 33 || x != 0) errors++;

#pragma omp target exit data map(from : x) device(3)
  printf("after exit from device 3: x=%d\n", x);
  if (x != 33) errors++;
#pragma omp target exit data map(from : x) device(1)
  printf("after exit from device 1: x=%d\n", x);
  if (x != 11) errors++;

  /* each device runs its own region; results are combined on the host */
  int part[4] = {0, 0, 0, 0};
  for (int d = 0; d < 4; ++d) {
    int lo = d * 250 + 1, hi = (d + 1) * 250;
    int s = 0;
#pragma omp target device(d) map(tofrom : s)
    {
      for (int i = lo; i <= hi; ++i) s += i;
    }
    part[d] = s;
  }
  printf("partial sums: %d %d %d %d total=%d\n", part[0], part[1], part[2], part[3],
         part[0] + part[1] + part[2] + part[3]);
  if (part[0] + part[1] + part[2] + part[3] != 500500) errors++;

  /* device(omp_get_initial_device()) runs on the host */
  int h = 0;
  int init = omp_get_initial_device();
#pragma omp target device(init) map(from : h)
  { h = omp_is_initial_device(); }
  printf("initial device region is_initial=%d\n", h);
  if (h != 1) errors++;

  /* default-device-var selects the device when no device clause */
  omp_set_default_device(2);
  int y = 5;
#pragma omp target data map(to : y)
  {
    printf("y present: dev2=%d dev0=%d\n", omp_target_is_present(&y, 2),
           omp_target_is_present(&y, 0));
    if (!omp_target_is_present(&y, 2) || omp_target_is_present(&y, 0)) errors++;
  }

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
