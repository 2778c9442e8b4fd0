// Pointer-to-pointer data: an int ** whose rows are mapped one by one
// (pp[0:2] plus pp[0][0:n], pp[1][0:n]), the row pointers in the device
// copy of pp attached to the device rows; and a multi-level section
// pp[i][0:n] with a non-constant i.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int n = 4;
  int **pp = malloc(2 * sizeof(int *));
  pp[0] = malloc(n * sizeof(int));
  pp[1] = malloc(n * sizeof(int));
  int *row0 = pp[0], *row1 = pp[1];
  for (int i = 0; i < n; ++i) {
    pp[0][i] = i;
    pp[1][i] = 10 + i;
  }

  /* the row-pointer array and each row, in one construct */
#pragma omp target enter data map(to : pp[0:2])
#pragma omp target enter data map(to : pp[0][0:n], pp[1][0:n])
  printf("present: pp=%d row0=%d row1=%d\n", omp_target_is_present(pp, dev),
         omp_target_is_present(row0, dev), omp_target_is_present(row1, dev));

  int s = 0;
#pragma omp target map(tofrom : s)
  {
    for (int i = 0; i < n; ++i) {
      s += pp[0][i] * pp[1][i];
      pp[0][i] = -pp[0][i];
      pp[1][i] += 100;
    }
  }
  printf("device dot=%d\n", s);
  if (s != 0 * 10 + 1 * 11 + 2 * 12 + 3 * 13) errors++;

  printf("host before update: row0[1]=%d row1[1]=%d\n", row0[1], row1[1]);
  if (row0[1] != 1 || row1[1] != 11) errors++;
#pragma omp target update from(pp[0][0:n])
#pragma omp target update from(pp[1][0:n])
  printf("host after update: row0=%d %d %d %d row1=%d %d %d %d\n", row0[0], row0[1], row0[2],
         row0[3], row1[0], row1[1], row1[2], row1[3]);
  if (row0[3] != -3 || row1[3] != 113) errors++;
  printf("host row pointers kept=%d\n", pp[0] == row0 && pp[1] == row1);
  if (pp[0] != row0 || pp[1] != row1) errors++;

  /* a section through a runtime index */
  for (int k = 0; k < 2; ++k) {
#pragma omp target map(tofrom : pp[k][1:2])
    {
      pp[k][1] = 1000 * (k + 1);
      pp[k][2] = 1000 * (k + 1) + 2;
    }
  }
#pragma omp target update from(pp[0][0:n])
#pragma omp target update from(pp[1][0:n])
  printf("after indexed regions: row0[1]=%d row0[2]=%d row1[1]=%d row1[2]=%d\n", row0[1],
         row0[2], row1[1], row1[2]);
  if (row0[1] != 1000 || row1[2] != 2002) errors++;

#pragma omp target exit data map(delete : pp[0][0:n], pp[1][0:n])
#pragma omp target exit data map(delete : pp[0:2])
  printf("after exit: pp=%d row0=%d row1=%d\n", omp_target_is_present(pp, dev),
         omp_target_is_present(row0, dev), omp_target_is_present(row1, dev));
  if (omp_target_is_present(pp, dev) || omp_target_is_present(row0, dev)) errors++;

  /* pp[0:2][0:n] style in one region: map the pointer array and rows */
  for (int i = 0; i < n; ++i) row0[i] = row1[i] = 1;
#pragma omp target map(to : pp[0:2]) map(tofrom : pp[0][0:n], pp[1][0:n])
  {
    for (int i = 0; i < n; ++i) pp[0][i] += pp[1][i] + i;
  }
  printf("one region: row0=%d %d %d %d\n", row0[0], row0[1], row0[2], row0[3]);
  if (row0[0] != 2 || row0[3] != 5) errors++;

  free(row0);
  free(row1);
  free(pp);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
