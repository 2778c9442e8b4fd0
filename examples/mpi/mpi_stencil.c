// MPI + OpenMP offload: a 2-D Jacobi heat stencil decomposed by rows over the MPI ranks.
// Each rank keeps its block (plus one halo row above and below) on its device for the whole
// run (`target data`), computes on the device, and exchanges halo rows every iteration:
// `target update from` its edge rows, MPI_Sendrecv with its neighbours, `target update to`
// the received halo rows. The device is chosen from the node-local rank
// (MPI_COMM_TYPE_SHARED), so several ranks share a GPU when there are fewer GPUs than ranks.
// Rank 0 gathers the grid and compares it with a serial computation of the same steps.
// usage: mpirun -np N mpi_stencil [NX=512] [ITERS=200]
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IDX(i, j) ((size_t)(i) * (size_t)nx + (size_t)(j))

static double initial(int i, int j, int nx, int ny) {
  if (i == 0) return 100.0;                 /* hot top edge */
  if (j == 0 || j == nx - 1) return 25.0;   /* warm sides */
  if (i > ny / 3 && i < ny / 2 && j > nx / 3 && j < nx / 2) return 50.0;
  (void)ny;
  return 0.0;
}

static void serial(double *a, double *b, int nx, int ny, int iters) {
  for (int it = 0; it < iters; ++it) {
    for (int i = 1; i < ny - 1; ++i)
      for (int j = 1; j < nx - 1; ++j)
        b[IDX(i, j)] = 0.25 * (a[IDX(i - 1, j)] + a[IDX(i + 1, j)] + a[IDX(i, j - 1)] + a[IDX(i, j + 1)]);
    double *t = a; a = b; b = t;
  }
  if (iters % 2) memcpy(b, a, sizeof(double) * (size_t)nx * (size_t)ny);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, local_rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank);

  int nx = argc > 1 ? atoi(argv[1]) : 512, ny = nx;
  int iters = argc > 2 ? atoi(argv[2]) : 200;
  /* Start-up, timed: the runtime finds its devices (omp_get_num_devices), and the first
     construct starts the rank's device (driver, context, image). */
  double ts = MPI_Wtime();
  int devices = omp_get_num_devices();
  int dev = devices > 0 ? local_rank % devices : omp_get_initial_device();
  omp_set_default_device(dev);

  /* Rows [first, first + rows) of the global grid; the global edge rows stay fixed. */
  int base = ny / size, extra = ny % size;
  int rows = base + (rank < extra), first = rank * base + (rank < extra ? rank : extra);
  int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  size_t cells = (size_t)(rows + 2) * (size_t)nx;
  double *a = malloc(sizeof(double) * cells), *b = malloc(sizeof(double) * cells);
  for (int i = 0; i < rows + 2; ++i)
    for (int j = 0; j < nx; ++j) {
      int g = first + i - 1;
      a[IDX(i, j)] = b[IDX(i, j)] = (g >= 0 && g < ny) ? initial(g, j, nx, ny) : 0.0;
    }
  /* Local rows i in [lo, hi] are updated: not the global first and last rows. */
  int lo = first == 0 ? 2 : 1, hi = first + rows == ny ? rows - 1 : rows;

#pragma omp target
  {
  }
  double startup = MPI_Wtime() - ts, slowest_startup = 0.0;
  MPI_Reduce(&startup, &slowest_startup, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  double t0 = MPI_Wtime();
#pragma omp target data map(tofrom : a[0:cells], b[0:cells])
  {
    for (int it = 0; it < iters; ++it) {
      double *src = it % 2 == 0 ? a : b, *dst = it % 2 == 0 ? b : a;
#pragma omp target teams distribute parallel for collapse(2)
      for (int i = lo; i <= hi; ++i)
        for (int j = 1; j < nx - 1; ++j)
          dst[IDX(i, j)] = 0.25 * (src[IDX(i - 1, j)] + src[IDX(i + 1, j)] + src[IDX(i, j - 1)] + src[IDX(i, j + 1)]);
      /* Halo exchange: our edge rows out, the neighbours' edge rows into our halo rows. */
#pragma omp target update from(dst[IDX(1, 0):nx])
#pragma omp target update from(dst[IDX(rows, 0):nx])
      MPI_Sendrecv(&dst[IDX(1, 0)], nx, MPI_DOUBLE, up, 0, &dst[IDX(rows + 1, 0)], nx, MPI_DOUBLE, down, 0,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Sendrecv(&dst[IDX(rows, 0)], nx, MPI_DOUBLE, down, 1, &dst[IDX(0, 0)], nx, MPI_DOUBLE, up, 1,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#pragma omp target update to(dst[IDX(0, 0):nx])
#pragma omp target update to(dst[IDX(rows + 1, 0):nx])
    }
  }
  double elapsed = MPI_Wtime() - t0;
  double *mine = iters % 2 ? b : a;

  /* Gather the interiors on rank 0 and compare with the serial computation. */
  int *counts = NULL, *displs = NULL;
  double *grid = NULL;
  if (rank == 0) {
    counts = malloc(sizeof(int) * size);
    displs = malloc(sizeof(int) * size);
    for (int r = 0, off = 0; r < size; ++r) {
      counts[r] = (base + (r < extra)) * nx;
      displs[r] = off;
      off += counts[r];
    }
    grid = malloc(sizeof(double) * (size_t)nx * (size_t)ny);
  }
  MPI_Gatherv(&mine[IDX(1, 0)], rows * nx, MPI_DOUBLE, grid, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int ran_on_device = dev != omp_get_initial_device();
  int all_on_device = 0;
  MPI_Reduce(&ran_on_device, &all_on_device, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    double *ra = malloc(sizeof(double) * (size_t)nx * (size_t)ny), *rb = malloc(sizeof(double) * (size_t)nx * (size_t)ny);
    for (int i = 0; i < ny; ++i)
      for (int j = 0; j < nx; ++j) ra[IDX(i, j)] = rb[IDX(i, j)] = initial(i, j, nx, ny);
    serial(ra, rb, nx, ny, iters);
    double maxdiff = 0.0;
    for (size_t k = 0; k < (size_t)nx * (size_t)ny; ++k) maxdiff = fmax(maxdiff, fabs(grid[k] - ra[k]));
    printf("ranks: %d, devices per process: %d, every rank on a device: %s\n", size, devices,
           all_on_device ? "yes" : "no");
    printf("grid %dx%d, %d iterations, max difference from the serial result: %g\n", nx, ny, iters, maxdiff);
    printf("time: %.3f s (device start-up before it, slowest rank: %.3f s)\n", elapsed, slowest_startup);
    printf("check: %s\n", maxdiff == 0.0 && all_on_device ? "OK" : "FAILED");
    free(ra);
    free(rb);
  }
  MPI_Finalize();
  return 0;
}
