// Deferred target tasks inside a taskgroup: the end of the taskgroup waits
// for every target task created in it (and for their descendants), so the
// results are visible right after it without a taskwait.
#include <omp.h>
#include <stdio.h>

#define N 32
#define K 8

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int a[K][N];
  for (int k = 0; k < K; ++k)
    for (int i = 0; i < N; ++i) a[k][i] = 0;

  /* 1: independent target tasks, one per row */
#pragma omp taskgroup
  {
    for (int k = 0; k < K; ++k) {
#pragma omp target map(tofrom : a[k][0:N]) nowait
      {
        for (int i = 0; i < N; ++i) a[k][i] = k * 100 + i;
      }
    }
  }
  int sum = 0;
  for (int k = 0; k < K; ++k)
    for (int i = 0; i < N; ++i) {
      sum += a[k][i];
      if (a[k][i] != k * 100 + i) errors++;
    }
  printf("independent rows: sum=%d\n", sum);

  /* 2: target tasks created by a host task inside the taskgroup are
     descendants of the taskgroup and are waited for as well */
  int b[N];
  for (int i = 0; i < N; ++i) b[i] = i;
#pragma omp taskgroup
  {
#pragma omp task shared(b)
    {
#pragma omp target map(tofrom : b) nowait depend(inout : b)
      {
        for (int i = 0; i < N; ++i) b[i] *= 3;
      }
#pragma omp target map(tofrom : b) nowait depend(inout : b)
      {
        for (int i = 0; i < N; ++i) b[i] += 7;
      }
    }
  }
  for (int i = 0; i < N; ++i)
    if (b[i] != i * 3 + 7) errors++;
  printf("descendant target tasks: b[0]=%d b[31]=%d\n", b[0], b[N - 1]);

  /* 3: nested taskgroups with enter/exit data nowait; the inner group ends
     with the data still mapped, the outer group ends after the exit */
  int c[N];
  for (int i = 0; i < N; ++i) c[i] = 1;
  int present_between = -1;
#pragma omp taskgroup
  {
#pragma omp taskgroup
    {
#pragma omp target enter data map(to : c) nowait depend(out : c)
#pragma omp target nowait depend(inout : c)
      {
        for (int i = 0; i < N; ++i) c[i] += i;
      }
    }
    present_between = omp_target_is_present(c, dev);
#pragma omp target exit data map(from : c) nowait depend(inout : c)
  }
  printf("nested groups: present between=%d after=%d c[0]=%d c[31]=%d\n", present_between,
         omp_target_is_present(c, dev), c[0], c[N - 1]);
  if (present_between != 1 || omp_target_is_present(c, dev)) errors++;
  for (int i = 0; i < N; ++i)
    if (c[i] != 1 + i) errors++;

  /* 4: a taskgroup in a parallel region: one thread creates the target
     tasks, any thread of the team may execute them */
  int d[K] = {0};
#pragma omp parallel num_threads(2) shared(d)
  {
#pragma omp single
    {
#pragma omp taskgroup
      {
        for (int k = 0; k < K; ++k) {
#pragma omp target map(tofrom : d[k:1]) nowait
          { d[k] = k * k; }
        }
      }
      for (int k = 0; k < K; ++k)
        if (d[k] != k * k) errors++;
    }
  }
  printf("in parallel/single: d[7]=%d\n", d[K - 1]);

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
