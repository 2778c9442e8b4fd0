// 16 host threads, each mapping its own private array tofrom in 50 target
// regions. Every thread's mappings are independent; each region sees the
// values the previous one copied back.
#include <omp.h>
#include <stdio.h>

#define NT 16
#define ITERS 50
#define N 32

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  long long result[NT];
  int left_present[NT];
  int nthreads = 0;

#pragma omp parallel num_threads(NT) reduction(+ : errors)
  {
    int t = omp_get_thread_num();
#pragma omp single
    nthreads = omp_get_num_threads();
    int a[N];
    for (int i = 0; i < N; ++i) a[i] = t * 1000 + i;
    for (int it = 0; it < ITERS; ++it) {
#pragma omp target map(tofrom : a) device(dev)
      {
        for (int i = 0; i < N; ++i) a[i] += it + (i & 3);
      }
      /* the copy back happened at the end of the region */
      if (a[0] != t * 1000 + it * (it + 1) / 2) errors++;
    }
    long long s = 0;
    for (int i = 0; i < N; ++i) {
      int expect = t * 1000 + i + ITERS * (ITERS - 1) / 2 + ITERS * (i & 3);
      if (a[i] != expect) errors++;
      s += a[i];
    }
    result[t] = s;
    left_present[t] = omp_target_is_present(a, dev);
  }

  /* thread ids index the results, so the output does not depend on order */
  printf("threads=%d\n", nthreads);
  long long total = 0;
  int left = 0;
  for (int t = 0; t < nthreads; ++t) {
    total += result[t];
    left += left_present[t];
  }
  printf("result[0]=%lld result[%d]=%lld total=%lld left present=%d\n", result[0], nthreads - 1,
         result[nthreads - 1], total, left);
  if (nthreads != NT || left) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
