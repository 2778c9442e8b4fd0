// One construct naming many items (its cost must stay linear in them): `target enter data` of N distinct 4-byte
// items in one construct, then `target exit data map(from:)` of the same N items, through
// the runtime's entry point directly (an OpenMP map clause cannot list 10^6 items).
//
// usage: many_items [reps] [N...]        (default: 3 reps of 10000 100000 1000000)
// Output, per N: scenario=enter_items_N median_us=<µs per construct> min_us=... reps=...
//                scenario=exit_items_N  ...
// Only the entry points every libomptarget exports are used, so LLVM 19's runtime and ours
// run the same binary (scripts/bench-host.sh).
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void __tgt_target_data_begin_mapper(void *loc, int64_t device, int32_t n, void **bases,
                                    void **begins, int64_t *sizes, int64_t *types,
                                    void **names, void **mappers);
void __tgt_target_data_end_mapper(void *loc, int64_t device, int32_t n, void **bases,
                                  void **begins, int64_t *sizes, int64_t *types, void **names,
                                  void **mappers);

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void report(const char *what, long n, double *t, int reps) {
  qsort(t, (size_t)reps, sizeof(double), cmp_double);
  double median = (reps % 2) ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
  printf("scenario=%s_items_%ld median_us=%.1f min_us=%.1f reps=%d\n", what, n, median, t[0],
         reps);
  fflush(stdout);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 3;
  long defaults[] = {10000, 100000, 1000000};
  int count = argc > 2 ? argc - 2 : 3;
  if (reps < 1) reps = 1;
  int dev = omp_get_default_device();
  (void)omp_get_num_devices();
  for (int k = 0; k < count; k++) {
    long n = argc > 2 ? atol(argv[k + 2]) : defaults[k];
    int *data = malloc(sizeof(int) * (size_t)n);
    void **ptrs = malloc(sizeof(void *) * (size_t)n);
    int64_t *sizes = malloc(sizeof(int64_t) * (size_t)n);
    int64_t *to = malloc(sizeof(int64_t) * (size_t)n);
    int64_t *from = malloc(sizeof(int64_t) * (size_t)n);
    double *te = malloc(sizeof(double) * (size_t)reps), *tx = malloc(sizeof(double) * (size_t)reps);
    for (long i = 0; i < n; i++) {
      data[i] = (int)i;
      ptrs[i] = &data[i];
      sizes[i] = sizeof(int);
      to[i] = 0x1;    // to
      from[i] = 0x2;  // from
    }
    for (int r = 0; r < reps; r++) {
      double t0 = omp_get_wtime();
      __tgt_target_data_begin_mapper(NULL, dev, (int32_t)n, ptrs, ptrs, sizes, to, NULL, NULL);
      double t1 = omp_get_wtime();
      for (long i = 0; i < n; i++) data[i] = -1;
      __tgt_target_data_end_mapper(NULL, dev, (int32_t)n, ptrs, ptrs, sizes, from, NULL, NULL);
      double t2 = omp_get_wtime();
      for (long i = 0; i < n; i++)
        if (data[i] != (int)i) {
          fprintf(stderr, "item %ld came back as %d\n", i, data[i]);
          return 1;
        }
      te[r] = (t1 - t0) * 1e6;
      tx[r] = (t2 - t1) * 1e6;
    }
    report("enter", n, te, reps);
    report("exit", n, tx, reps);
    free(data), free(ptrs), free(sizes), free(to), free(from), free(te), free(tx);
  }
  return 0;
}
