// DIVERGENCE: LLVM 19's runtime copies only the first element of each contiguous run of a multi-dimensional non-contiguous target update
// Non-contiguous `target update` (OpenMP 5.2 §5.9 and §5.1.5 array sections): exactly the
// elements the sections name move between host and device, and no others.
// m[1:2][1:3] names rows 1-2, columns 1-3; c[0:2][1:2][0:2] names 8 elements of a 3-D
// array; m[0:3][2:1] names column 2 of every row. The expected output (the .expected file)
// follows from the specification; LLVM 19 moves only the first element of each row run.
// (A 1-D strided section such as a[0:4:2] cannot be tested here: clang 19 emits it as a
// contiguous 16-byte update, so no runtime sees the stride. See docs/DIVERGENCES.md.)
#include <stdio.h>

int main(void) {
  int m[3][4];
  int c[2][3][4];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) m[i][j] = 10 * i + j;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) c[i][j][k] = 100 * i + 10 * j + k;
#pragma omp target enter data map(to : m, c)
#pragma omp target
  {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) m[i][j] += 1000;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k) c[i][j][k] += 1000;
  }
#pragma omp target update from(m[1:2][1:3])
  printf("m after update from(m[1:2][1:3]):\n");
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) printf(" %d", m[i][j]);
    printf("\n");
  }
#pragma omp target update from(c[0:2][1:2][0:2])
  printf("c after update from(c[0:2][1:2][0:2]):\n");
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) printf(" %d", c[i][j][k]);
      printf("\n");
    }
  for (int i = 0; i < 3; ++i) {
    m[i][2] = -1;
    m[i][3] = -2; /* not named by the update below: must not reach the device */
  }
#pragma omp target update to(m[0:3][2:1])
#pragma omp target update from(m)
  printf("device m after update to(m[0:3][2:1]):\n");
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) printf(" %d", m[i][j]);
    printf("\n");
  }
#pragma omp target exit data map(delete : m, c)
  return 0;
}
