// The library of exit_lib_global_dtor.c: a shared library that offloads from its own C++
// global destructor and from an atexit handler. Both run during the program's exit after the
// program's own image is unregistered (the program registered its image after this library
// was loaded, so its unregistration runs first), while this library's image is still
// registered: their constructs must run on the device, and their results are read here.
#include <omp.h>
#include <cstdio>
#include <cstdlib>

#pragma omp declare target
int lib_scale = 1;
#pragma omp end declare target

enum { N = 1000 };

// Maps an array tofrom, writes it in a region (scaled by a device global that only the device
// copy holds), copies it back, and checks every value.
static int check_region(const char *who) {
  static double a[N];
  for (int i = 0; i < N; i++) a[i] = i;
  int on_host = -1, scale = -1;
#pragma omp target map(tofrom : a[0:N]) map(from : on_host, scale)
  {
    on_host = omp_is_initial_device();
    scale = lib_scale;
    for (int i = 0; i < N; i++) a[i] = a[i] * lib_scale + 1;
  }
  int bad = 0;
  for (int i = 0; i < N; i++)
    if (a[i] != i * 3.0 + 1) bad++;
  // enter / update / exit data, read back.
  double b[8] = {0};
#pragma omp target enter data map(to : b)
#pragma omp target map(alloc : b)
  for (int i = 0; i < 8; i++) b[i] = 10 + i;
#pragma omp target exit data map(from : b)
  for (int i = 0; i < 8; i++)
    if (b[i] != 10 + i) bad++;
  std::printf("%s: on host %d, device scale %d, %d wrong values\n", who, on_host, scale, bad);
  std::fflush(stdout);
  return bad;
}

struct Checker {
  ~Checker() {
    if (check_region("library global destructor"))
      std::_Exit(3);
  }
};

static Checker checker;

static void at_exit_handler() {
  if (check_region("library atexit handler"))
    std::_Exit(4);
}

extern "C" void lib_setup(void) {
  // The device copy of the scale differs from the host's: a host fallback would compute
  // with 1.
#pragma omp target
  lib_scale = 3;
  std::printf("library: set up\n");
}

__attribute__((constructor)) static void register_handler() { std::atexit(at_exit_handler); }
