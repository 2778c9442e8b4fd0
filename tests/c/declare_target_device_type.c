// `declare target` with `device_type` (OpenMP 5.2 §7.8.1, §7.8.2): `any` procedures exist on
// the host and the devices; `nohost` ones only on devices (a `declare variant` gives the
// host its own version, used by host code and host fallback); `host` ones only on the host.
// Target regions on a device call the device versions; the same code on the host (the
// initial device) calls the host versions.
#include <omp.h>
#include <stdio.h>

int where_host(void) { return 1; }
int where_device(void) { return 2; }
#pragma omp declare target to(where_device) device_type(nohost)
#pragma omp declare variant(where_device) match(device = {kind(nohost)})
int where(void) { return where_host(); }

int host_only(int x) { return x + 1000; }
#pragma omp declare target to(host_only) device_type(host)

#pragma omp begin declare target device_type(any)
int everywhere(int x) { return 2 * x; }
#pragma omp end declare target

int scaled = 5;
#pragma omp declare target to(scaled) device_type(any)

int main(void) {
  int errors = 0;
  int on_dev = 0, twice = 0, s = 0;
#pragma omp target map(from : on_dev, twice, s)
  {
    on_dev = where();
    twice = everywhere(21);
    s = scaled;
  }
  int on_host = where();
  printf("device region: where=%d everywhere(21)=%d scaled=%d; host: where=%d host_only=%d\n",
         on_dev, twice, s, on_host, host_only(1));
  if (on_dev != 2 || twice != 42 || s != 5 || on_host != 1 || host_only(1) != 1001)
    errors++;

  // The same region on the initial device runs the host versions.
  int fallback = 0;
#pragma omp target device(omp_get_initial_device()) map(from : fallback)
  fallback = where();
  printf("region on the initial device: where=%d\n", fallback);
  if (fallback != 1)
    errors++;
  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
