// Offload-runtime overhead benchmark: launches many tiny target regions
// and reports the per-region cost.
//
// usage: host_regions [scenario] [reps] [regions]
//   scenario: empty | map64 | all            (default: all)
//   reps:     number of timed repetitions    (default: 7)
//   regions:  regions per repetition         (default: 20000)
// Scenarios:
//   empty : "#pragma omp target" with an empty body
//   map64 : "#pragma omp target map(tofrom: buf[0:8])" (64 bytes) with a
//           trivial body
// Output, one line per scenario:
//   scenario=<name> median_us=<median over reps of per-region time>
//   min_us=<fastest rep, per region> reps=<reps>
// 1000 untimed warm-up regions precede each scenario. Only portable
// OpenMP is used, so this builds for the host-device plugin as well as
// for a GPU (e.g. clang -fopenmp --offload-arch=sm_90 -O2 host_regions.c).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP 1000

static double buf[8];

static void run_empty(long n) {
  for (long i = 0; i < n; ++i) {
#pragma omp target
    {
    }
  }
}

static void run_map64(long n) {
  for (long i = 0; i < n; ++i) {
#pragma omp target map(tofrom : buf[0:8])
    { buf[i & 7] += 1.0; }
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void bench(const char *name, void (*fn)(long), int reps, long regions) {
  double *t = malloc(sizeof(double) * (size_t)reps);
  fn(WARMUP);
  for (int r = 0; r < reps; ++r) {
    double t0 = omp_get_wtime();
    fn(regions);
    double t1 = omp_get_wtime();
    t[r] = (t1 - t0) * 1e6 / (double)regions;
  }
  qsort(t, (size_t)reps, sizeof(double), cmp_double);
  double median = (reps % 2) ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
  printf("scenario=%s median_us=%.3f min_us=%.3f reps=%d\n", name, median, t[0], reps);
  fflush(stdout);
  free(t);
}

int main(int argc, char **argv) {
  const char *scenario = argc > 1 ? argv[1] : "all";
  int reps = argc > 2 ? atoi(argv[2]) : 7;
  long regions = argc > 3 ? atol(argv[3]) : 20000;
  if (reps < 1 || regions < 1) {
    fprintf(stderr, "usage: %s [empty|map64|all] [reps>=1] [regions>=1]\n", argv[0]);
    return 2;
  }
  int known = 0;
  if (!strcmp(scenario, "empty") || !strcmp(scenario, "all")) {
    bench("empty", run_empty, reps, regions);
    known = 1;
  }
  if (!strcmp(scenario, "map64") || !strcmp(scenario, "all")) {
    for (int i = 0; i < 8; ++i) buf[i] = 0.0;
    bench("map64", run_map64, reps, regions);
    known = 1;
    /* sanity: every region added 1.0 to one element and copied it back */
    double s = 0.0;
    for (int i = 0; i < 8; ++i) s += buf[i];
    double expect = (double)WARMUP + (double)reps * (double)regions;
    if (s != expect) {
      fprintf(stderr, "map64: wrong result %.0f (expected %.0f)\n", s, expect);
      return 1;
    }
  }
  if (!known) {
    fprintf(stderr, "unknown scenario '%s' (use empty, map64 or all)\n", scenario);
    return 2;
  }
  return 0;
}
