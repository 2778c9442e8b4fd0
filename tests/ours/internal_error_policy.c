// An internal error of the runtime inside a construct fails that construct: forced in a debug build
// of ours with OMPTARGET_RS_DEBUG_PANIC=ENTRY_POINT. The construct has failed, so the offload
// policy decides: fatal under MANDATORY and under DEFAULT with devices (LLVM's "failure of
// target construct while offloading is mandatory"), never a silent host fallback.
//
// usage: internal_error_policy target|enter
#include <omp.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  int x = 1, on_host = -1;
  printf("devices %d\n", omp_get_num_devices());
  fflush(stdout);
  if (argc > 1 && !strcmp(argv[1], "enter")) {
#pragma omp target enter data map(to : x)
    printf("after enter data: present %d\n", omp_target_is_present(&x, omp_get_default_device()));
  } else {
#pragma omp target map(tofrom : x) map(from : on_host)
    {
      x += 1;
      on_host = omp_is_initial_device();
    }
    printf("after target: x %d on host %d\n", x, on_host);
  }
  return 0;
}
