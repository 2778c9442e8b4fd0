// SHARED-LIB: exit_own_image_late_lib.c
// DIVERGENCE: a target region of the program's own image issued after the exit unregistered that image (from a library's atexit handler) runs on the device, whose code the runtime keeps loaded until the process ends; LLVM 19 unloaded it and stops with a fatal error
// The program's image is unregistered by the handler its offload constructor registered
// before main; a library loaded earlier registered its atexit handler before that, so the
// handler runs later and calls into the program, which issues a region. It must run (on the
// device: `on host 0`) or fail, never be skipped as if it had run (x would stay 1).
#include <omp.h>
#include <stdio.h>

void lib_set_callback(void (*f)(void));

static void late(void) {
  int x = 1, on_host = -1;
#pragma omp target map(tofrom : x) map(from : on_host)
  {
    x += 1;
    on_host = omp_is_initial_device();
  }
  printf("late region: x %d, on host %d\n", x, on_host);
  fflush(stdout);
}

int main(void) {
  int x = 1;
#pragma omp target map(tofrom : x)
  x += 1;
  lib_set_callback(late);
  printf("main: x %d\n", x);
  fflush(stdout);
  return 0;
}
