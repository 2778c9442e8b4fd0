// The shape of BabelStream's OpenMP offload version, as an application uses it: three
// arrays entered once (map(alloc)), initialised by a kernel, then iterations of the five
// kernels (copy, mul, add, triad, dot with a reduction into a mapped scalar), the nstream
// kernel, `target update from` of the results and `exit data map(delete)`. 16 MiB per
// array; one array then goes back and forth ten times, past the 256 MiB after which the CUDA
// plugin stages large copies of pageable memory (in chunks, with streaming stores). The
// values are small integers held in doubles, so every result, the dot product included (a sum of
// equal integer products below 2^53, exact in any order), is exact and checked against
// the same recurrence on the host.
// CFLAGS: -Wno-pass-failed
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1L << 21)
#define ITERS 3

static double dot(const double *a, const double *b, long n) {
  double sum = 0.0;
#pragma omp target teams distribute parallel for simd map(tofrom : sum) reduction(+ : sum)
  for (long i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

int main(void) {
  double *a = malloc(N * sizeof(double));
  double *b = malloc(N * sizeof(double));
  double *c = malloc(N * sizeof(double));
  if (!a || !b || !c) return 1;
  const double scalar = 3.0;
  int errors = 0;

#pragma omp target enter data map(alloc : a[0:N], b[0:N], c[0:N])
#pragma omp target teams distribute parallel for simd
  for (long i = 0; i < N; ++i) {
    a[i] = 1.0;
    b[i] = 2.0;
    c[i] = 0.0;
  }

  // The host's recurrence for one element.
  double ea = 1.0, eb = 2.0, ec = 0.0;
  for (int k = 0; k < ITERS; ++k) {
#pragma omp target teams distribute parallel for simd
    for (long i = 0; i < N; ++i) c[i] = a[i];
#pragma omp target teams distribute parallel for simd
    for (long i = 0; i < N; ++i) b[i] = scalar * c[i];
#pragma omp target teams distribute parallel for simd
    for (long i = 0; i < N; ++i) c[i] = a[i] + b[i];
#pragma omp target teams distribute parallel for simd
    for (long i = 0; i < N; ++i) a[i] = b[i] + scalar * c[i];
    double sum = dot(a, b, N);
    ec = ea;
    eb = scalar * ec;
    ec = ea + eb;
    ea = eb + scalar * ec;
    double want = (double)N * ea * eb;
    printf("iteration %d: dot=%.1f (want %.1f)\n", k, sum, want);
    if (sum != want) errors++;
  }
  // nstream: a += b + scalar * c
#pragma omp target teams distribute parallel for simd
  for (long i = 0; i < N; ++i) a[i] += b[i] + scalar * c[i];
  ea += eb + scalar * ec;

#pragma omp target update from(a[0:N], b[0:N], c[0:N])
  long bad = 0;
  for (long i = 0; i < N; ++i)
    if (a[i] != ea || b[i] != eb || c[i] != ec) bad++;
  printf("a=%.1f b=%.1f c=%.1f, %ld elements wrong\n", a[N - 1], b[N - 1], c[N - 1], bad);
  if (bad) errors++;

  // Back and forth: the host halves c (plus a pattern), the device undoes it, ten times.
  for (int r = 0; r < 10; ++r) {
    for (long i = 0; i < N; ++i) c[i] = c[i] * 0.5 + (double)(i & 7);
#pragma omp target update to(c[0:N])
#pragma omp target teams distribute parallel for simd
    for (long i = 0; i < N; ++i) c[i] = (c[i] - (double)(i & 7)) * 2.0;
#pragma omp target update from(c[0:N])
    bad = 0;
    for (long i = 0; i < N; ++i) bad += c[i] != ec;
    if (bad) {
      printf("round %d: %ld elements of c wrong\n", r, bad);
      errors++;
    }
  }

  // The host copies are the results; the device's are changed once more and deleted
  // without a copy back.
#pragma omp target teams distribute parallel for simd
  for (long i = 0; i < N; ++i) a[i] = -1.0;
#pragma omp target exit data map(delete : a[0:N], b[0:N], c[0:N])
  if (a[0] != ea || a[N - 1] != ea) errors++;
  printf("after delete: a[0]=%.1f present=%d\n", a[0],
         omp_target_is_present(a, omp_get_default_device()));

  free(a);
  free(b);
  free(c);
  printf("%s\n", errors ? "FAIL" : "PASS");
  return errors != 0;
}
