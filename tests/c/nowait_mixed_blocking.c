// Deferred target tasks interleaved with blocking target regions and a
// target data region on other data. A blocking target region with a
// depend clause waits for the deferred tasks it depends on; blocking
// regions on unrelated data need not wait but must not disturb them.
#include <omp.h>
#include <stdio.h>

#define N 64
#define ROUNDS 6

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int a[N], b[N], c[N];
  for (int i = 0; i < N; ++i) {
    a[i] = i;
    b[i] = 0;
    c[i] = 100 + i;
  }

#pragma omp target data map(tofrom : c)
  {
    for (int r = 0; r < ROUNDS; ++r) {
      /* deferred, chained on a */
#pragma omp target map(tofrom : a) nowait depend(inout : a)
      {
        for (int i = 0; i < N; ++i) a[i] = a[i] * 2 + 1;
      }
      /* blocking, on b (own mapping each time) */
#pragma omp target map(tofrom : b)
      {
        for (int i = 0; i < N; ++i) b[i] += r;
      }
      /* blocking, on c (present via target data: no copy back yet) */
#pragma omp target map(tofrom : c)
      {
        for (int i = 0; i < N; ++i) c[i] -= 1;
      }
    }
    /* c has not been copied back while the target data region is open */
    printf("inside target data: host c[0]=%d present=%d\n", c[0],
           omp_target_is_present(c, dev));
    if (c[0] != 100) errors++;

    /* a blocking region that depends on the deferred chain: it must see
       all ROUNDS updates, and its own result is available right after it */
    int a0 = -1;
#pragma omp target map(tofrom : a) map(from : a0) depend(in : a)
    { a0 = a[0]; }
    printf("blocking after chain: a0=%d\n", a0);
    if (a0 != (1 << ROUNDS) - 1) errors++;

    /* more deferred work on a, and a blocking update of c in between */
#pragma omp target map(tofrom : a) nowait depend(inout : a)
    {
      for (int i = 0; i < N; ++i) a[i] -= i;
    }
#pragma omp target update from(c)
    printf("after update from: c[0]=%d c[63]=%d\n", c[0], c[N - 1]);
    if (c[0] != 100 - ROUNDS || c[N - 1] != 100 + N - 1 - ROUNDS) errors++;
#pragma omp taskwait
  }

  int pa = (1 << ROUNDS);
  for (int i = 0; i < N; ++i) {
    /* a_R = (a_0 + 1) * 2^R - 1, then minus i */
    if (a[i] != (i + 1) * pa - 1 - i) errors++;
    if (b[i] != ROUNDS * (ROUNDS - 1) / 2) errors++;
    if (c[i] != 100 + i - ROUNDS) errors++;
  }
  printf("a[0]=%d a[63]=%d b[0]=%d c[0]=%d present a/b/c=%d%d%d\n", a[0], a[N - 1], b[0], c[0],
         omp_target_is_present(a, dev), omp_target_is_present(b, dev),
         omp_target_is_present(c, dev));

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
