// Offloading from a C++ global object's destructor, after main returned (the runtime must still serve it): the
// destructor runs a target region that reads a device global main changed on the device only
// and maps data. It must run on the device (host fallback would see the host copy, 1).
#include <omp.h>
#include <cstdio>

#pragma omp declare target
int dev_value = 1;
#pragma omp end declare target

struct Reporter {
  ~Reporter() {
    int seen = -1, on_host = -1;
    double d[16];
    for (int i = 0; i < 16; i++) d[i] = i;
#pragma omp target map(from : seen, on_host) map(tofrom : d)
    {
      seen = dev_value;
      on_host = omp_is_initial_device();
      for (int i = 0; i < 16; i++) d[i] += 1.0;
    }
    double sum = 0;
    for (int i = 0; i < 16; i++) sum += d[i];
    std::printf("destructor: device global %d, on host %d, sum %.1f\n", seen, on_host, sum);
    std::fflush(stdout);
  }
};

static Reporter reporter;

int main() {
  int x = 1;
#pragma omp target map(tofrom : x)
  {
    dev_value = 42;
    x += 1;
  }
  std::printf("main: x %d\n", x);
  std::printf("main: host copy %d\n", dev_value);
  return 0;
}
