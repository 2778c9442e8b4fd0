// 16 host threads mixing target regions on shared read-only data (mapped
// once before the parallel region) with target regions and target data
// regions on their own private data.
#include <omp.h>
#include <stdio.h>

#define NT 16
#define ITERS 20
#define N 64

static int table[N];

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  for (int i = 0; i < N; ++i) table[i] = 3 * i + 1;

#pragma omp target enter data map(to : table) device(dev)
  /* the host copy changes; the device copy, mapped above, does not */
  for (int i = 0; i < N; ++i) table[i] = 0;

  long long res[NT];
  int nthreads = 0;
#pragma omp parallel num_threads(NT) reduction(+ : errors)
  {
    int t = omp_get_thread_num();
#pragma omp single
    nthreads = omp_get_num_threads();
    int priv[N], acc[N];
    for (int i = 0; i < N; ++i) {
      priv[i] = t;
      acc[i] = 0;
    }
    for (int it = 0; it < ITERS; ++it) {
      /* shared (present, read-only) + private tofrom */
#pragma omp target map(to : table) map(tofrom : priv) device(dev)
      {
        for (int i = 0; i < N; ++i) priv[i] = priv[i] + table[(i + it) % N];
      }
      /* private data kept on the device across two regions */
#pragma omp target data map(tofrom : acc) device(dev)
      {
#pragma omp target map(tofrom : acc) device(dev)
        {
          for (int i = 0; i < N; ++i) acc[i] += 1;
        }
#pragma omp target map(to : table) device(dev)
        {
          for (int i = 0; i < N; ++i) acc[i] += table[i] & 1;
        }
        /* not copied back before the end of target data */
        if (acc[0] != it * 2) errors++;
      }
      if (acc[0] != (it + 1) * 2) errors++;
      /* a region using only private data, scalar result */
      int m = -1;
#pragma omp target map(to : priv) map(from : m) device(dev)
      {
        int x = priv[0];
        for (int i = 1; i < N; ++i)
          if (priv[i] > x) x = priv[i];
        m = x;
      }
      int hm = priv[0];
      for (int i = 1; i < N; ++i)
        if (priv[i] > hm) hm = priv[i];
      if (m != hm) errors++;
    }
    long long s = 0;
    for (int i = 0; i < N; ++i) {
      int e = t;
      for (int it = 0; it < ITERS; ++it) e += 3 * ((i + it) % N) + 1;
      if (priv[i] != e) errors++;
      if (acc[i] != ITERS * (1 + ((3 * i + 1) & 1))) errors++;
      s += priv[i] + acc[i];
    }
    res[t] = s;
    if (omp_target_is_present(priv, dev) || omp_target_is_present(acc, dev)) errors++;
  }

  long long total = 0;
  for (int t = 0; t < nthreads; ++t) total += res[t];
  printf("threads=%d res[0]=%lld res[%d]=%lld total=%lld\n", nthreads, res[0], nthreads - 1,
         res[nthreads - 1], total);
  printf("table still present=%d host table[1]=%d\n", omp_target_is_present(table, dev),
         table[1]);
  if (nthreads != NT || !omp_target_is_present(table, dev) || table[1] != 0) errors++;
#pragma omp target exit data map(release : table) device(dev)
  printf("table present after release=%d\n", omp_target_is_present(table, dev));
  if (omp_target_is_present(table, dev)) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
