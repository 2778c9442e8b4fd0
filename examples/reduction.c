// Sum and dot product with "target teams distribute parallel for
// reduction(+:...)" over 8M doubles, compared with a host reference.
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 8L * 1024 * 1024;
  double *x = malloc(sizeof(double) * n);
  double *y = malloc(sizeof(double) * n);
  if (!x || !y) {
    printf("allocation failed\n");
    return 1;
  }
  for (long i = 0; i < n; ++i) {
    x[i] = 0.5 * (double)(i % 1000); /* exactly representable */
    y[i] = (double)(i % 3 + 1);
  }

  int on_host = -1;
  int dev = omp_get_default_device();
  int ndev = omp_get_num_devices();
  double sum = 0.0, dot = 0.0;
  double t0 = omp_get_wtime();
#pragma omp target data map(to : x[0:n], y[0:n])
  {
#pragma omp target map(from : on_host)
    { on_host = omp_is_initial_device(); }
#pragma omp target teams distribute parallel for reduction(+ : sum)
    for (long i = 0; i < n; ++i) sum += x[i];
#pragma omp target teams distribute parallel for reduction(+ : dot)
    for (long i = 0; i < n; ++i) dot += x[i] * y[i];
  }
  double t1 = omp_get_wtime();

  if (on_host)
    printf("ran on: host (initial device)\n");
  else
    printf("ran on: offload device %d (of %d)\n", dev, ndev);

  double rsum = 0.0, rdot = 0.0;
  for (long i = 0; i < n; ++i) {
    rsum += x[i];
    rdot += x[i] * y[i];
  }
  /* all partial sums are multiples of 0.5 below 2^52: exact in any order */
  int ok = fabs(sum - rsum) <= 1e-12 * fabs(rsum) && fabs(dot - rdot) <= 1e-12 * fabs(rdot);
  printf("n=%ld sum=%.1f dot=%.1f\n", n, sum, dot);
  printf("reference sum=%.1f dot=%.1f\n", rsum, rdot);
  printf("check: %s\n", ok ? "OK" : "FAILED");
  printf("time: %.3f ms (including transfers)\n", (t1 - t0) * 1e3);
  free(x);
  free(y);
  return ok ? 0 : 1;
}
