// A profile worth looking at (docs/PROFILING.md): two host threads each map their own array,
// run a kernel on it and copy it back, three times; then two `nowait` regions from one
// thread. On a GPU each construct runs on a stream of its own: the two threads' copies and
// kernels overlap on the timeline, and each exit's stream-ordered free sits on its stream
// behind the copy back.
#include <omp.h>
#include <stdio.h>

#define N (1 << 20)
static double a[2][N];

int main(void) {
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < N; ++i)
      a[t][i] = i;
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    double *x = a[t];
    for (int rep = 0; rep < 3; ++rep) {
#pragma omp target enter data map(to : x[0 : N])
#pragma omp target teams distribute parallel for
      for (int i = 0; i < N; ++i)
        x[i] = 2 * x[i] + t;
#pragma omp target exit data map(from : x[0 : N])
    }
  }
  double *x0 = a[0], *x1 = a[1];
#pragma omp target teams distribute parallel for map(tofrom : x0[0 : N]) nowait
  for (int i = 0; i < N; ++i)
    x0[i] += 1;
#pragma omp target teams distribute parallel for map(tofrom : x1[0 : N]) nowait
  for (int i = 0; i < N; ++i)
    x1[i] += 1;
#pragma omp taskwait
  int ok = 1;
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < N; ++i)
      ok &= a[t][i] == 8.0 * i + 7 * t + 1;
  printf("check: %s\n", ok ? "OK" : "FAILED");
  return !ok;
}
