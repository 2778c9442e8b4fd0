// 2-D Jacobi heat stencil on a 1024x1024 grid, 100 iterations inside one
// "target data" region (the grid stays on the device between iterations).
// The checksum is compared with a host reference computation.
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define IDX(i, j) ((size_t)(i) * (size_t)nx + (size_t)(j))

static void init(double *u, int nx, int ny) {
  for (int i = 0; i < ny; ++i)
    for (int j = 0; j < nx; ++j) {
      double v = 0.0;
      if (i == 0) v = 100.0;                       /* hot top edge */
      if (j == 0 || j == nx - 1) v = 25.0;         /* warm sides */
      if (i > ny / 3 && i < ny / 2 && j > nx / 3 && j < nx / 2) v = 50.0; /* hot block */
      u[IDX(i, j)] = v;
    }
}

static double checksum(const double *u, int nx, int ny) {
  double s = 0.0;
  for (int i = 0; i < ny; ++i)
    for (int j = 0; j < nx; ++j) s += u[IDX(i, j)] * (1.0 + (double)((i + j) % 3));
  return s;
}

static void host_reference(double *a, double *b, int nx, int ny, int iters) {
  for (int it = 0; it < iters; ++it) {
    double *src = (it % 2 == 0) ? a : b;
    double *dst = (it % 2 == 0) ? b : a;
    for (int i = 1; i < ny - 1; ++i)
      for (int j = 1; j < nx - 1; ++j)
        dst[IDX(i, j)] = 0.25 * (src[IDX(i - 1, j)] + src[IDX(i + 1, j)] + src[IDX(i, j - 1)] +
                                 src[IDX(i, j + 1)]);
  }
}

int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 1024;
  int ny = nx;
  int iters = argc > 2 ? atoi(argv[2]) : 100;
  size_t cells = (size_t)nx * (size_t)ny;
  double *a = malloc(sizeof(double) * cells);
  double *b = malloc(sizeof(double) * cells);
  double *ra = malloc(sizeof(double) * cells);
  double *rb = malloc(sizeof(double) * cells);
  if (!a || !b || !ra || !rb) {
    printf("allocation failed\n");
    return 1;
  }
  init(a, nx, ny);
  init(b, nx, ny); /* boundary values must be present in both buffers */
  init(ra, nx, ny);
  init(rb, nx, ny);

  int on_host = -1;
  int dev = omp_get_default_device();
  int ndev = omp_get_num_devices();
  double t0 = omp_get_wtime();
#pragma omp target data map(tofrom : a[0:cells]) map(to : b[0:cells])
  {
#pragma omp target map(from : on_host)
    { on_host = omp_is_initial_device(); }
    for (int it = 0; it < iters; ++it) {
      /* alternate direction instead of swapping pointers: both buffers
         keep their own device copies */
      if (it % 2 == 0) {
#pragma omp target teams distribute parallel for collapse(2)
        for (int i = 1; i < ny - 1; ++i)
          for (int j = 1; j < nx - 1; ++j)
            b[IDX(i, j)] =
                0.25 * (a[IDX(i - 1, j)] + a[IDX(i + 1, j)] + a[IDX(i, j - 1)] + a[IDX(i, j + 1)]);
      } else {
#pragma omp target teams distribute parallel for collapse(2)
        for (int i = 1; i < ny - 1; ++i)
          for (int j = 1; j < nx - 1; ++j)
            a[IDX(i, j)] =
                0.25 * (b[IDX(i - 1, j)] + b[IDX(i + 1, j)] + b[IDX(i, j - 1)] + b[IDX(i, j + 1)]);
      }
    }
    if (iters % 2 == 1) {
      /* result is in b: bring it back */
#pragma omp target update from(b[0:cells])
    }
  }
  double t1 = omp_get_wtime();
  const double *res = (iters % 2 == 1) ? b : a;

  if (on_host)
    printf("ran on: host (initial device)\n");
  else
    printf("ran on: offload device %d (of %d)\n", dev, ndev);

  host_reference(ra, rb, nx, ny, iters);
  const double *ref = (iters % 2 == 1) ? rb : ra;
  double cs = checksum(res, nx, ny);
  double cref = checksum(ref, nx, ny);
  double maxdiff = 0.0;
  for (size_t k = 0; k < cells; ++k) {
    double d = fabs(res[k] - ref[k]);
    if (d > maxdiff) maxdiff = d;
  }
  int ok = fabs(cs - cref) <= 1e-9 * fabs(cref) && maxdiff <= 1e-9;
  printf("stencil %dx%d iters=%d checksum=%.6e reference=%.6e\n", nx, ny, iters, cs, cref);
  printf("check: %s\n", ok ? "OK" : "FAILED");
  printf("time: %.3f ms (device part, including transfers)\n", (t1 - t0) * 1e3);
  free(a);
  free(b);
  free(ra);
  free(rb);
  return ok ? 0 : 1;
}
