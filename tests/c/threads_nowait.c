// Host threads each running their own asynchronous pipeline on private
// data: enter data nowait, a chain of target nowait regions, update from
// nowait, exit data nowait, all ordered by dependences on the thread's own
// array, and a taskwait per thread.
#include <omp.h>
#include <stdio.h>

#define NT 8
#define N 32
#define STEPS 10

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int mid[NT], fin[NT], left[NT];
  int nthreads = 0;

#pragma omp parallel num_threads(NT) reduction(+ : errors)
  {
    int t = omp_get_thread_num();
#pragma omp single
    nthreads = omp_get_num_threads();
    int a[N];
    for (int i = 0; i < N; ++i) a[i] = t;
#pragma omp target enter data map(to : a) nowait depend(out : a) device(dev)
    for (int k = 0; k < STEPS; ++k) {
#pragma omp target map(tofrom : a) nowait depend(inout : a) device(dev)
      {
        for (int i = 0; i < N; ++i) a[i] = a[i] * 2 + (i == k);
      }
    }
#pragma omp target update from(a) nowait depend(inout : a) device(dev)
#pragma omp taskwait
    mid[t] = a[0];
    /* device copy keeps going; host copy is overwritten by exit data */
#pragma omp target nowait depend(inout : a) device(dev)
    {
      for (int i = 0; i < N; ++i) a[i] += 1;
    }
#pragma omp target exit data map(from : a) nowait depend(inout : a) device(dev)
#pragma omp taskwait
    fin[t] = a[0];
    for (int i = 0; i < N; ++i) {
      int e = t;
      for (int k = 0; k < STEPS; ++k) e = e * 2 + (i == k);
      if (a[i] != e + 1) errors++;
    }
    left[t] = omp_target_is_present(a, dev);
  }

  printf("threads=%d\n", nthreads);
  int l = 0;
  for (int t = 0; t < nthreads; ++t) {
    printf("thread %d: mid=%d fin=%d\n", t, mid[t], fin[t]);
    l += left[t];
    int e = t * (1 << STEPS) + (1 << (STEPS - 1));
    if (mid[t] != e || fin[t] != e + 1) errors++;
  }
  printf("left present=%d\n", l);
  if (nthreads != NT || l) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
