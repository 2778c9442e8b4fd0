// Many host threads offloading small regions (where threads meet in the runtime) on whatever device the program was
// built for (the host device here: clang -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu): T
// threads each run `map(tofrom: 64 B)` regions on their own buffer, as gpu_scenarios.c's
// threadsT_map64B rows do on a GPU. The aggregate time per region shows whether throughput
// holds or collapses where the threads meet (locks, shared atomics).
//
// usage: host_threads [all|threadsT] [reps=7] [regions=64000]
//   all: threads2, threads4, ..., threads64; `regions` is the total per repetition, split
//   evenly between the threads.
// Output, one line per scenario (`omptarget-suite bench` compares them):
//   scenario=threadsT median_us=<median over reps of the aggregate time per region>
//   min_us=<fastest rep> reps=<reps>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 128

/* One buffer of 64 B per thread, each on its own cache line, so the program itself shares
   nothing between threads. */
static double bufs[MAX_THREADS][8] __attribute__((aligned(64)));

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void run(int t, long per_thread) {
#pragma omp parallel num_threads(t)
  {
    double *b = bufs[omp_get_thread_num()];
    for (long i = 0; i < per_thread; ++i) {
#pragma omp target map(tofrom : b[0:8])
      { b[i & 7] += 1.0; }
    }
  }
}

static int bench(int t, int reps, long regions) {
  long per_thread = regions / t > 0 ? regions / t : 1;
  double times[64];
  memset(bufs, 0, sizeof bufs);
  long warm = per_thread < 100 ? per_thread : 100;
  run(t, warm); /* warm-up: every thread's first regions */
  for (int r = 0; r < reps; ++r) {
    double t0 = omp_get_wtime();
    run(t, per_thread);
    times[r] = (omp_get_wtime() - t0) * 1e6 / (double)(per_thread * t);
  }
  qsort(times, (size_t)reps, sizeof(double), cmp);
  printf("scenario=threads%d median_us=%.3f min_us=%.3f reps=%d\n", t, times[reps / 2], times[0],
         reps);
  fflush(stdout);
  /* sanity: every region added 1.0 to one element of its thread's buffer and copied it back */
  for (int k = 0; k < t; ++k) {
    double s = 0.0;
    for (int i = 0; i < 8; ++i) s += bufs[k][i];
    double expect = (double)warm + (double)reps * (double)per_thread;
    if (s != expect) {
      fprintf(stderr, "threads%d: thread %d has %.0f (expected %.0f)\n", t, k, s, expect);
      return 1;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *which = argc > 1 ? argv[1] : "all";
  int reps = argc > 2 ? atoi(argv[2]) : 7;
  long regions = argc > 3 ? atol(argv[3]) : 64000;
  if (reps < 1 || reps > 63 || regions < 1) {
    fprintf(stderr, "usage: %s [all|threadsT] [reps 1..63] [regions>=1]\n", argv[0]);
    return 2;
  }
  int ran = 0;
  for (int t = 2; t <= 64; t *= 2) {
    char name[32];
    snprintf(name, sizeof name, "threads%d", t);
    if (!strcmp(which, "all") || !strcmp(which, name)) {
      if (bench(t, reps, regions)) return 1;
      ran = 1;
    }
  }
  if (!ran && !strncmp(which, "threads", 7)) {
    int t = atoi(which + 7);
    if (t >= 1 && t <= MAX_THREADS) return bench(t, reps, regions);
  }
  if (!ran) {
    fprintf(stderr, "unknown scenario '%s' (all, or threadsT with T <= %d)\n", which, MAX_THREADS);
    return 2;
  }
  return 0;
}
