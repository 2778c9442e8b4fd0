// nowait and depend on combined target constructs: target teams distribute
// parallel for and target parallel for (with and without a reduction),
// chained by dependences. Small teams and thread counts keep the host
// device from oversubscribing. (A teams reduction in a deferred target task
// hangs inside LLVM 19's libomp on the host device, cf. llvm-project issue
// #70744, so the deferred reductions here use target parallel for; the
// teams reduction is blocking.)
#include <omp.h>
#include <stdio.h>

#define N 1000

int main(void) {
  int errors = 0;
  static double a[N], b[N];
  long long sum = 0, sumsq = 0;
  for (int i = 0; i < N; ++i) {
    a[i] = i;
    b[i] = 0;
  }

#pragma omp target teams distribute parallel for num_teams(1) thread_limit(2) \
    map(tofrom : a) nowait depend(inout : a)
  for (int i = 0; i < N; ++i) a[i] = 2 * a[i] + 1;

#pragma omp target parallel for num_threads(2) map(to : a) map(from : b) nowait \
    depend(in : a) depend(out : b)
  for (int i = 0; i < N; ++i) b[i] = a[i] - i;

#pragma omp target parallel for num_threads(2) map(to : b) reduction(+ : sum) nowait \
    depend(in : b) depend(out : sum)
  for (int i = 0; i < N; ++i) sum += (long long)b[i];

  /* independent of the chain above except through 'a' */
#pragma omp target parallel for num_threads(2) map(to : a) reduction(+ : sumsq) nowait \
    depend(in : a) depend(out : sumsq)
  for (int i = 0; i < N; ++i) sumsq += (long long)a[i] * (long long)a[i];

#pragma omp taskwait
  for (int i = 0; i < N; ++i)
    if (a[i] != 2.0 * i + 1 || b[i] != i + 1.0) errors++;
  long long esum = (long long)N * (N + 1) / 2, esq = 0;
  for (long long i = 0; i < N; ++i) esq += (2 * i + 1) * (2 * i + 1);
  printf("a[999]=%.0f b[999]=%.0f sum=%lld sumsq=%lld\n", a[N - 1], b[N - 1], sum, sumsq);
  if (sum != esum || sumsq != esq) errors++;

  /* a blocking teams reduction after the deferred work, ordered by depend */
  long long tsum = 0;
#pragma omp target teams distribute parallel for num_teams(1) thread_limit(2) \
    map(to : b) reduction(+ : tsum) depend(in : b)
  for (int i = 0; i < N; ++i) tsum += (long long)b[i] * 2;
  printf("blocking teams reduction=%lld\n", tsum);
  if (tsum != 2 * esum) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
