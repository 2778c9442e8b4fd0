// Map types to, from, tofrom on a target construct: check which direction
// each one copies.
#include <omp.h>
#include <stdio.h>

#define N 16

int main(void) {
  int errors = 0;
  int a[N], b[N], c[N];
  for (int i = 0; i < N; ++i) {
    a[i] = i;        /* input only */
    b[i] = -1;       /* output only: initial host values must not matter */
    c[i] = 100 + i;  /* in and out */
  }

#pragma omp target map(to : a) map(from : b) map(tofrom : c)
  {
    for (int i = 0; i < N; ++i) {
      b[i] = a[i] * 3;
      c[i] = c[i] + a[i];
      a[i] = 999; /* must not come back */
    }
  }

  for (int i = 0; i < N; ++i) {
    if (a[i] != i) errors++;
    if (b[i] != 3 * i) errors++;
    if (c[i] != 100 + 2 * i) errors++;
  }
  printf("a[3]=%d b[3]=%d c[3]=%d\n", a[3], b[3], c[3]);
  printf("a[15]=%d b[15]=%d c[15]=%d\n", a[15], b[15], c[15]);

  /* map(from:) of a scalar: device value is whatever the region writes */
  double d = 1.5;
#pragma omp target map(from : d)
  { d = 2.25; }
  printf("d=%.2f\n", d);
  if (d != 2.25) errors++;

  /* map(to:) of a scalar: modifications on the device are not copied back */
  long t = 77;
  long seen = 0;
#pragma omp target map(to : t) map(from : seen)
  {
    seen = t;
    t = 0;
  }
  printf("t=%ld seen=%ld\n", t, seen);
  if (t != 77 || seen != 77) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
