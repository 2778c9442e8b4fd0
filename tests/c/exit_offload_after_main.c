// Offloading after main returns (the runtime must still serve it): an atexit handler runs target regions that
// read a device global main changed on the device only, map new data and update the host.
// The runtime must still work during exit, up to the unregistration of the images (which
// runs from an atexit handler registered before this one, so after it), and the regions must
// run on the device: host fallback would read the host copy of the global (1, not 42).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#pragma omp declare target
int dev_value = 1;
#pragma omp end declare target

static void after_main(void) {
  int seen = -1, on_host = -1;
  int buf[64];
  for (int i = 0; i < 64; i++) buf[i] = i;
#pragma omp target map(from : seen, on_host) map(tofrom : buf)
  {
    seen = dev_value;
    on_host = omp_is_initial_device();
    for (int i = 0; i < 64; i++) buf[i] *= 2;
  }
  int sum = 0;
  for (int i = 0; i < 64; i++) sum += buf[i];
  printf("atexit: device global %d, on host %d, sum %d\n", seen, on_host, sum);
#pragma omp target enter data map(to : buf)
#pragma omp target exit data map(delete : buf)
  printf("atexit: enter/exit data done, present %d\n",
         omp_target_is_present(buf, omp_get_default_device()));
  fflush(stdout);
}

int main(void) {
  atexit(after_main);
  int x = 1;
#pragma omp target map(tofrom : x)
  {
    dev_value = 42;
    x += 1;
  }
  int host = dev_value;
  printf("main: x %d\n", x);
  printf("main: host copy %d\n", host);
  return 0;
}
