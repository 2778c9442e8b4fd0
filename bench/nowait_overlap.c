// nowait overlap: N independent target regions, each a ~1 ms kernel on its own data, run one by
// one (each region waits for the previous) and as `target nowait` tasks joined by `taskwait`.
// Prints per-region medians over reps, in the format omptarget-suite bench reads, and the speed-up.
// usage: nowait_overlap [regions=16] [reps=5] [spin=400000]
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXN 256
#define TEAMS 4
#define THREADS 128

static double data[MAXN][TEAMS * THREADS];

static void region(int i, long spin) {
  double *d = data[i];
#pragma omp target teams distribute parallel for num_teams(TEAMS) thread_limit(THREADS) map(tofrom : d[0:TEAMS * THREADS])
  for (int j = 0; j < TEAMS * THREADS; ++j) {
    double x = d[j];
    for (long k = 0; k < spin; ++k) x = x * 0.999999 + 1e-6;
    d[j] = x;
  }
}

static void region_nowait(int i, long spin) {
  double *d = data[i];
#pragma omp target teams distribute parallel for num_teams(TEAMS) thread_limit(THREADS) map(tofrom : d[0:TEAMS * THREADS]) nowait
  for (int j = 0; j < TEAMS * THREADS; ++j) {
    double x = d[j];
    for (long k = 0; k < spin; ++k) x = x * 0.999999 + 1e-6;
    d[j] = x;
  }
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  /* A first argument that is not a number (the bench runner's "all") selects the defaults. */
  int numeric = argc > 1 && argv[1][0] >= '0' && argv[1][0] <= '9';
  int n = numeric ? atoi(argv[1]) : 16;
  int reps = numeric && argc > 2 ? atoi(argv[2]) : 5;
  long spin = numeric && argc > 3 ? atol(argv[3]) : 400000;
  if (n < 1 || n > MAXN || reps < 1) return 2;
  double seq[64], par[64];
  region(0, spin); /* warm-up: load the image, grow pools */
#pragma omp parallel
#pragma omp single
  {
    for (int i = 0; i < n; ++i) region_nowait(i, 1);
#pragma omp taskwait
  }
  for (int r = 0; r < reps && r < 64; ++r) {
    double t0 = omp_get_wtime();
    for (int i = 0; i < n; ++i) region(i, spin);
    double t1 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
    {
      for (int i = 0; i < n; ++i) region_nowait(i, spin);
#pragma omp taskwait
    }
    double t2 = omp_get_wtime();
    seq[r] = (t1 - t0) * 1e6 / n;
    par[r] = (t2 - t1) * 1e6 / n;
  }
  qsort(seq, reps, sizeof(double), cmp);
  qsort(par, reps, sizeof(double), cmp);
  double s = seq[reps / 2], p = par[reps / 2];
  printf("scenario=nowait%d_one_by_one median_us=%.3f\n", n, s);
  printf("scenario=nowait%d_overlapped median_us=%.3f\n", n, p);
  printf("speedup of overlapping: %.2fx\n", s / p);
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += data[i][7];
  printf("check: %s\n", sum > 0 ? "OK" : "FAILED");
  return 0;
}
