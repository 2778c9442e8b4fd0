// 2-D arrays: whole-array mapping, a row-range section m[1:2][0:COLS],
// and a heap matrix addressed through a row-major pointer section.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 4
#define COLS 5

int main(void) {
  int errors = 0;
  int m[ROWS][COLS];
  for (int i = 0; i < ROWS; ++i)
    for (int j = 0; j < COLS; ++j) m[i][j] = 10 * i + j;

#pragma omp target map(tofrom : m)
  {
    for (int i = 0; i < ROWS; ++i)
      for (int j = 0; j < COLS; ++j) m[i][j] += 1000;
  }
  printf("whole: m[0][0]=%d m[3][4]=%d\n", m[0][0], m[3][4]);
  if (m[0][0] != 1000 || m[3][4] != 1034) errors++;

  /* rows 1..2 only */
#pragma omp target map(tofrom : m[1:2][0:COLS])
  {
    for (int i = 1; i < 3; ++i)
      for (int j = 0; j < COLS; ++j) m[i][j] = -m[i][j];
  }
  printf("rows 1-2:");
  for (int i = 0; i < ROWS; ++i) printf(" m[%d][2]=%d", i, m[i][2]);
  printf("\n");
  if (m[0][2] != 1002 || m[1][2] != -1012 || m[2][2] != -1022 || m[3][2] != 1032) errors++;

  /* heap matrix, mapped as a flat section and indexed in 2-D */
  int n = 64;
  double *g = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; ++i) g[i] = 0.0;
#pragma omp target map(tofrom : g[0:n * n])
  {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) g[i * n + j] = i + 0.5 * j;
  }
  double s = 0;
  for (int i = 0; i < n * n; ++i) s += g[i];
  printf("heap matrix sum=%.1f g[5*n+7]=%.1f\n", s, g[5 * n + 7]);
  /* sum_i sum_j (i + 0.5 j) = n*n(n-1)/2 * 1.5 */
  if (s != 1.5 * n * n * (n - 1) / 2.0) errors++;
  free(g);

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
