// A chain of deferred target tasks (target nowait) ordered by depend(inout:)
// on the same array. Each step applies a non-commutative update
// (a = a * 2 + k), so the final values prove the steps ran in program order.
// The loop counter k is firstprivate in each target task and must be
// captured when the task is created, not when it runs.
#include <omp.h>
#include <stdio.h>

#define N 64
#define STEPS 12

int main(void) {
  int errors = 0;
  int a[N], expect[N];
  for (int i = 0; i < N; ++i) a[i] = expect[i] = i;

  /* 1: every step maps the array tofrom itself */
  for (int k = 0; k < STEPS; ++k) {
#pragma omp target map(tofrom : a) nowait depend(inout : a)
    {
      for (int i = 0; i < N; ++i) a[i] = a[i] * 2 + k;
    }
  }
#pragma omp taskwait
  for (int k = 0; k < STEPS; ++k)
    for (int i = 0; i < N; ++i) expect[i] = expect[i] * 2 + k;
  for (int i = 0; i < N; ++i)
    if (a[i] != expect[i]) errors++;
  printf("per-step mapping: a[0]=%d a[1]=%d a[63]=%d\n", a[0], a[1], a[N - 1]);

  /* 2: the array stays on the device (enter data), the chain works on the
     device copy, exit data brings it back; all of it deferred and ordered */
  int b[N];
  for (int i = 0; i < N; ++i) b[i] = expect[i] = N - i;
#pragma omp target enter data map(to : b) nowait depend(out : b)
  for (int k = 1; k <= STEPS; ++k) {
#pragma omp target map(tofrom : b) nowait depend(inout : b)
    {
      for (int i = 0; i < N; ++i) b[i] = b[i] * 3 - k;
    }
  }
#pragma omp target exit data map(from : b) nowait depend(inout : b)
#pragma omp taskwait
  for (int k = 1; k <= STEPS; ++k)
    for (int i = 0; i < N; ++i) expect[i] = expect[i] * 3 - k;
  for (int i = 0; i < N; ++i)
    if (b[i] != expect[i]) errors++;
  printf("device-resident chain: b[0]=%d b[32]=%d b[63]=%d present=%d\n", b[0], b[32],
         b[N - 1], omp_target_is_present(b, omp_get_default_device()));
  if (omp_target_is_present(b, omp_get_default_device())) errors++;

  /* 3: two interleaved chains on two arrays; each chain is ordered, the two
     are independent of each other */
  int c[N], d[N];
  for (int i = 0; i < N; ++i) c[i] = d[i] = 1;
  for (int k = 0; k < STEPS; ++k) {
#pragma omp target map(tofrom : c) nowait depend(inout : c)
    {
      for (int i = 0; i < N; ++i) c[i] = c[i] * 2 + (i & 1);
    }
#pragma omp target map(tofrom : d) nowait depend(inout : d)
    {
      for (int i = 0; i < N; ++i) d[i] = d[i] * 3 - k;
    }
  }
#pragma omp taskwait
  int ec = 1, ed = 1, ec1 = 1;
  for (int k = 0; k < STEPS; ++k) {
    ec = ec * 2;
    ec1 = ec1 * 2 + 1;
    ed = ed * 3 - k;
  }
  for (int i = 0; i < N; ++i)
    if (c[i] != ((i & 1) ? ec1 : ec) || d[i] != ed) errors++;
  printf("two chains: c[0]=%d c[1]=%d d[0]=%d\n", c[0], c[1], d[0]);

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
