// target parallel for, target parallel with an explicit worksharing loop,
// and atomic updates inside a target parallel region.
#include <omp.h>
#include <stdio.h>

#define N 4096

int main(void) {
  int errors = 0;
  static float x[N], y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = (float)i;
    y[i] = 1.0f;
  }
  float a = 3.0f;
#pragma omp target parallel for map(to : x) map(tofrom : y)
  for (int i = 0; i < N; ++i) y[i] = a * x[i] + y[i];
  double s = 0;
  for (int i = 0; i < N; ++i) s += y[i];
  printf("saxpy y[100]=%.1f sum=%.1f\n", y[100], s);
  if (y[100] != 301.0f || s != 3.0 * (N * (N - 1) / 2.0) + N) errors++;

  int hits = 0;
#pragma omp target parallel map(tofrom : hits)
  {
#pragma omp for
    for (int i = 0; i < 1000; ++i) {
      if (i % 7 == 0) {
#pragma omp atomic
        hits++;
      }
    }
  }
  printf("multiples of 7 below 1000: %d\n", hits);
  if (hits != 143) errors++;

  long total = 0;
#pragma omp target parallel for reduction(+ : total) schedule(static, 16)
  for (int i = 1; i <= 2000; ++i) total += i;
  printf("total=%ld\n", total);
  if (total != 2001000) errors++;

  /* if clause false: region runs on the host */
  int init = -1;
#pragma omp target parallel if (target : 0) map(from : init) num_threads(1)
  { init = omp_is_initial_device(); }
  printf("if(target:0) ran on initial device: %d\n", init);
  if (init != 1) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
