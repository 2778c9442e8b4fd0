// Many deferred target tasks in flight at once, from several host threads:
// 4 threads each create 64 independent target nowait regions on their own
// slice of a shared array, then 64 more that depend on the first ones, then
// taskwait. 512 target tasks in all; every element is checked.
#include <omp.h>
#include <stdio.h>

#define NT 4
#define PER 64
#define CH 8
#define N (NT * PER * CH)

static int a[N];

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  for (int i = 0; i < N; ++i) a[i] = -1;

  int created[NT] = {0};
#pragma omp parallel num_threads(NT) shared(a, created)
  {
    int t = omp_get_thread_num();
    int tn = omp_get_num_threads();
    /* stage 1: 64 independent regions per thread */
    for (int j = t; j < NT * PER; j += tn) {
      int base = j * CH;
#pragma omp target map(tofrom : a[base:CH]) nowait depend(out : a[base:CH]) device(dev)
      {
        for (int i = 0; i < CH; ++i) a[base + i] = (base + i) * 3;
      }
      created[t]++;
    }
    /* stage 2: each depends on its stage-1 region */
    for (int j = t; j < NT * PER; j += tn) {
      int base = j * CH;
#pragma omp target map(tofrom : a[base:CH]) nowait depend(inout : a[base:CH]) device(dev)
      {
        for (int i = 0; i < CH; ++i) a[base + i] += base / CH;
      }
      created[t]++;
    }
#pragma omp taskwait
  }

  int total = 0;
  for (int t = 0; t < NT; ++t) total += created[t];
  long long sum = 0;
  for (int i = 0; i < N; ++i) {
    int expect = i * 3 + i / CH;
    if (a[i] != expect) errors++;
    sum += a[i];
  }
  printf("target tasks created=%d elements=%d sum=%lld a[0]=%d a[%d]=%d\n", total, N, sum,
         a[0], N - 1, a[N - 1]);
  if (total != 2 * NT * PER) errors++;

  /* all of the above mapped and unmapped; nothing is left present */
  int left = 0;
  for (int j = 0; j < NT * PER; ++j) left += omp_target_is_present(&a[j * CH], dev);
  printf("left present=%d\n", left);
  if (left) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
