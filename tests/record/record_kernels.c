// Kernels for record/replay (crates/abi/tests/record_replay.rs): each is recorded under
// LIBOMPTARGET_RECORD=1 and replayed by LLVM's llvm-omp-kernel-replay-19, whose --verify
// compares the device memory after the replay with the memory after the recorded run.
//   scale:  a mapped array, first-private scalars;
//   chase:  a struct whose pointer member the runtime attached on the device (the kernel
//           follows a device pointer stored in device memory: the replay must put the
//           memory back at the recorded address);
//   global: a declare target global read and written;
//   sum:    a teams reduction.
#include <stdio.h>

struct list {
  int n;
  double *v;
};

#pragma omp declare target
double bias = 0.5;
#pragma omp end declare target

int main(void) {
  enum { N = 64 };
  double a[N], b[N];
  for (int i = 0; i < N; ++i) {
    a[i] = i;
    b[i] = 2 * i;
  }
  double f = 3, g = 1;
#pragma omp target teams distribute parallel for map(tofrom : a[0 : N]) firstprivate(f, g)
  for (int i = 0; i < N; ++i)
    a[i] = f * a[i] + g;

  struct list l = {N, b};
#pragma omp target map(tofrom : l, l.v[0 : N])
  for (int i = 0; i < l.n; ++i)
    l.v[i] += l.n;

#pragma omp target update to(bias)
#pragma omp target map(tofrom : a[0 : N])
  {
    for (int i = 0; i < N; ++i)
      a[i] += bias;
    bias *= 2;
  }
#pragma omp target update from(bias)

  double sum = 0;
#pragma omp target teams distribute parallel for reduction(+ : sum) map(to : b[0 : N])
  for (int i = 0; i < N; ++i)
    sum += b[i];
  printf("a[1]=%g b[1]=%g bias=%g sum=%g\n", a[1], b[1], bias, sum);
  return 0;
}
