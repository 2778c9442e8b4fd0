// target teams distribute parallel for with reduction(+:sum) over 10000
// elements, plus max/min reductions and a combined construct writing an
// array.
#include <omp.h>
#include <stdio.h>

#define N 10000

int main(void) {
  int errors = 0;
  static double a[N], b[N];
  for (int i = 0; i < N; ++i) {
    a[i] = (double)(i % 100);
    b[i] = 0.5;
  }

  double sum = 0.0;
#pragma omp target teams distribute parallel for reduction(+ : sum) map(to : a, b)
  for (int i = 0; i < N; ++i) sum += a[i] * b[i];
  printf("dot=%.1f\n", sum);
  /* 100 blocks of sum(0..99)=4950, times 0.5 */
  if (sum != 100.0 * 4950.0 * 0.5) errors++;

  long isum = 0;
  int mx = -1, mn = 1 << 30;
#pragma omp target teams distribute parallel for reduction(+ : isum) reduction(max : mx) \
    reduction(min : mn)
  for (int i = 0; i < N; ++i) {
    int v = (i * 37) % 1001;
    isum += v;
    if (v > mx) mx = v;
    if (v < mn) mn = v;
  }
  long ref = 0;
  int rmx = -1, rmn = 1 << 30;
  for (int i = 0; i < N; ++i) {
    int v = (i * 37) % 1001;
    ref += v;
    if (v > rmx) rmx = v;
    if (v < rmn) rmn = v;
  }
  printf("isum=%ld max=%d min=%d\n", isum, mx, mn);
  if (isum != ref || mx != rmx || mn != rmn) errors++;

  static int c[N];
#pragma omp target teams distribute parallel for map(from : c)
  for (int i = 0; i < N; ++i) c[i] = 2 * i;
  long cs = 0;
  for (int i = 0; i < N; ++i) cs += c[i];
  printf("c[9999]=%d csum=%ld\n", c[N - 1], cs);
  if (c[N - 1] != 19998 || cs != 99990000L) errors++;

  /* collapse(2) */
  static int m[100][100];
#pragma omp target teams distribute parallel for collapse(2) map(from : m)
  for (int i = 0; i < 100; ++i)
    for (int j = 0; j < 100; ++j) m[i][j] = i - j;
  long ms = 0;
  for (int i = 0; i < 100; ++i)
    for (int j = 0; j < 100; ++j) ms += m[i][j] * (i + 1);
  printf("collapse m[99][0]=%d weighted=%ld\n", m[99][0], ms);
  long mref = 0;
  for (int i = 0; i < 100; ++i)
    for (int j = 0; j < 100; ++j) mref += (long)(i - j) * (i + 1);
  if (ms != mref) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
