// SAXPY y = a*x + y on 16M floats with "target teams distribute parallel
// for". Prints where the region ran, a correctness check, and a timing.
// Builds for any offload target, e.g.
//   clang -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 saxpy.c
//   clang -fopenmp --offload-arch=sm_90 -O2 saxpy.c
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 16L * 1024 * 1024;
  const float a = 2.5f;
  float *x = malloc(sizeof(float) * n);
  float *y = malloc(sizeof(float) * n);
  if (!x || !y) {
    printf("allocation failed\n");
    return 1;
  }
  for (long i = 0; i < n; ++i) {
    x[i] = (float)(i % 1024);
    y[i] = (float)(i % 7);
  }

  int on_host = -1;
  int dev = omp_get_default_device();
  int ndev = omp_get_num_devices();
  double t0 = omp_get_wtime();
#pragma omp target teams distribute parallel for map(to : x[0:n]) map(tofrom : y[0:n]) \
    map(tofrom : on_host)
  for (long i = 0; i < n; ++i) {
    if (i == 0) on_host = omp_is_initial_device();
    y[i] = a * x[i] + y[i];
  }
  double t1 = omp_get_wtime();

  if (on_host)
    printf("ran on: host (initial device)\n");
  else
    printf("ran on: offload device %d (of %d)\n", dev, ndev);

  /* every value is exactly representable: compare exactly */
  long bad = 0;
  for (long i = 0; i < n; ++i) {
    float expect = a * (float)(i % 1024) + (float)(i % 7);
    if (y[i] != expect) bad++;
  }
  printf("saxpy n=%ld y[0]=%.1f y[n-1]=%.1f\n", n, y[0], y[n - 1]);
  printf("check: %s\n", bad == 0 ? "OK" : "FAILED");
  printf("time: %.3f ms (including transfers)\n", (t1 - t0) * 1e3);
  free(x);
  free(y);
  return bad == 0 ? 0 : 1;
}
