// 16 host threads entering and exiting the SAME mapping (enter data to /
// exit data release) repeatedly around target regions that read it. The
// reference count is shared: the array stays present while any thread
// holds a reference and is gone once every thread has released its own.
#include <omp.h>
#include <stdio.h>

#define NT 16
#define ITERS 20
#define N 128

static int s[N];

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  for (int i = 0; i < N; ++i) s[i] = i + 1;
  const int expect_sum = N * (N + 1) / 2;

  int present_before = omp_target_is_present(s, dev);
  int present_all_hold = 0, present_after = -1;
  long long sums[NT];
  int nthreads = 0;

#pragma omp parallel num_threads(NT) reduction(+ : errors)
  {
    int t = omp_get_thread_num();
#pragma omp single
    nthreads = omp_get_num_threads();
    long long acc = 0;
    for (int it = 0; it < ITERS; ++it) {
#pragma omp target enter data map(to : s) device(dev)
      /* this thread holds a reference: s is present */
      if (!omp_target_is_present(s, dev)) errors++;
      int sum = -1;
#pragma omp target map(to : s) map(from : sum) device(dev)
      {
        int x = 0;
        for (int i = 0; i < N; ++i) x += s[i];
        sum = x;
      }
      if (sum != expect_sum) errors++;
      acc += sum + t;
      /* a second, nested reference taken and dropped by the same thread */
      if (it % 5 == 0) {
#pragma omp target enter data map(to : s) device(dev)
#pragma omp target map(to : s) map(from : sum) device(dev)
        { sum = s[0] + s[N - 1]; }
        if (sum != 1 + N) errors++;
#pragma omp target exit data map(release : s) device(dev)
        if (!omp_target_is_present(s, dev)) errors++;
      }
#pragma omp target exit data map(release : s) device(dev)
    }
    sums[t] = acc;

    /* every thread takes a reference, then all check, then all release */
#pragma omp target enter data map(to : s) device(dev)
#pragma omp barrier
#pragma omp single
    present_all_hold = omp_target_is_present(s, dev);
    /* (implicit barrier of single) */
#pragma omp target exit data map(release : s) device(dev)
#pragma omp barrier
#pragma omp single
    present_after = omp_target_is_present(s, dev);
  }

  long long total = 0;
  for (int t = 0; t < nthreads; ++t) {
    total += sums[t];
    if (sums[t] != (long long)ITERS * (expect_sum + t)) errors++;
  }
  printf("threads=%d total=%lld\n", nthreads, total);
  printf("present before=%d while all hold=%d after all released=%d at end=%d\n", present_before,
         present_all_hold, present_after, omp_target_is_present(s, dev));
  if (nthreads != NT || present_before || !present_all_hold || present_after ||
      omp_target_is_present(s, dev))
    errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
