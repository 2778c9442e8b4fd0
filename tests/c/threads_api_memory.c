// 16 host threads using the device memory routines concurrently:
// omp_target_alloc, omp_target_memcpy (h->d, d->d, d->h), target regions
// on the allocations through is_device_ptr, omp_target_memcpy_rect, and
// omp_target_free.
#include <omp.h>
#include <stdio.h>

#define NT 16
#define ITERS 20
#define N 64

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  long long res[NT];
  int nthreads = 0;

#pragma omp parallel num_threads(NT) reduction(+ : errors)
  {
    int t = omp_get_thread_num();
#pragma omp single
    nthreads = omp_get_num_threads();
    int h[N], back[N];
    long long acc = 0;
    for (int it = 0; it < ITERS; ++it) {
      int *d1 = (int *)omp_target_alloc(N * sizeof(int), dev);
      int *d2 = (int *)omp_target_alloc(N * sizeof(int), dev);
      if (!d1 || !d2) {
        errors++;
        continue;
      }
      for (int i = 0; i < N; ++i) h[i] = t * 100 + it + i;
      if (omp_target_memcpy(d1, h, sizeof h, 0, 0, dev, host)) errors++;
#pragma omp target is_device_ptr(d1) device(dev)
      {
        for (int i = 0; i < N; ++i) d1[i] *= 2;
      }
      /* d1 -> d2 on the device, shifted by 8 elements */
      if (omp_target_memcpy(d2, d1, (N - 8) * sizeof(int), 8 * sizeof(int), 0, dev, dev))
        errors++;
      if (omp_target_memcpy(d2, d1, 8 * sizeof(int), 0, (N - 8) * sizeof(int), dev, dev))
        errors++;
      if (omp_target_memcpy(back, d2, sizeof back, 0, 0, host, dev)) errors++;
      for (int i = 0; i < N; ++i)
        if (back[i] != 2 * (t * 100 + it + (i + N - 8) % N)) errors++;
      /* 2-D: the 4x4 upper-left block of d2 seen as 8x8, to a 4x4 host array */
      int blk[4][4];
      size_t vol[2] = {4, 4}, zo[2] = {0, 0}, dd[2] = {8, 8}, hd[2] = {4, 4};
      if (omp_target_memcpy_rect(blk, d2, sizeof(int), 2, vol, zo, zo, hd, dd, host, dev))
        errors++;
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c)
          if (blk[r][c] != back[r * 8 + c]) errors++;
      acc += back[0] + blk[3][3];
      omp_target_free(d1, dev);
      omp_target_free(d2, dev);
    }
    res[t] = acc;
  }

  long long total = 0;
  for (int t = 0; t < nthreads; ++t) total += res[t];
  printf("threads=%d res[0]=%lld res[%d]=%lld total=%lld\n", nthreads, res[0], nthreads - 1,
         res[nthreads - 1], total);
  if (nthreads != NT) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
