// omp_target_memcpy_rect (OpenMP 5.2 §18.8.6): a 3-D sub-volume host ->
// device -> host with non-zero offsets on both sides, and a 2-D
// device -> device copy between two allocations.
#include <omp.h>
#include <stdio.h>
#include <string.h>

#define X 3
#define Y 4
#define Z 5

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  int src[X][Y][Z], back[X][Y][Z];
  for (int i = 0; i < X; ++i)
    for (int j = 0; j < Y; ++j)
      for (int k = 0; k < Z; ++k) src[i][j][k] = 100 * i + 10 * j + k;
  memset(back, 0xff, sizeof(back)); /* -1 everywhere */

  int *d = omp_target_alloc(sizeof(src), dev);
  int *d2 = omp_target_alloc(sizeof(src), dev);
  int zero[X * Y * Z];
  memset(zero, 0, sizeof(zero));
  omp_target_memcpy(d, zero, sizeof(zero), 0, 0, dev, host);

  /* copy src[1..2][1..2][2..4] to device at [0..1][2..3][0..2] */
  size_t vol[3] = {2, 2, 3};
  size_t dims[3] = {X, Y, Z};
  size_t src_off[3] = {1, 1, 2};
  size_t dst_off[3] = {0, 2, 0};
  int r1 = omp_target_memcpy_rect(d, src, sizeof(int), 3, vol, dst_off, src_off, dims, dims,
                                  dev, host);
  /* device whole volume back, then check the block and zeros around it */
  size_t all[3] = {X, Y, Z}, o0[3] = {0, 0, 0};
  int r2 = omp_target_memcpy_rect(back, d, sizeof(int), 3, all, o0, o0, dims, dims, host, dev);
  printf("rc=%d %d\n", r1, r2);
  printf("back[0][2][0..2]=%d %d %d back[1][3][2]=%d\n", back[0][2][0], back[0][2][1],
         back[0][2][2], back[1][3][2]);
  printf("around: back[0][1][0]=%d back[0][2][3]=%d back[2][2][0]=%d\n", back[0][1][0],
         back[0][2][3], back[2][2][0]);
  if (r1 || r2 || back[0][2][0] != 112 || back[0][2][2] != 114 || back[1][3][2] != 224 ||
      back[0][1][0] != 0 || back[0][2][3] != 0 || back[2][2][0] != 0)
    errors++;

  /* 3-D device -> host into an offset region of a differently sized array */
  int big[4][5][6];
  memset(big, 0, sizeof(big));
  size_t bdims[3] = {4, 5, 6};
  size_t boff[3] = {2, 3, 3};
  int r3 = omp_target_memcpy_rect(big, d, sizeof(int), 3, vol, boff, dst_off, bdims, dims, host,
                                  dev);
  printf("big rc=%d big[2][3][3]=%d big[3][4][5]=%d big[2][3][2]=%d big[3][4][0]=%d\n", r3,
         big[2][3][3], big[3][4][5], big[2][3][2], big[3][4][0]);
  if (r3 || big[2][3][3] != 112 || big[3][4][5] != 224 || big[2][3][2] != 0) errors++;

  /* 2-D device -> device: rows 1..2, cols 1..3 of a 4x5 into a 3x4 at (0,0) */
  int m[4][5];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) m[i][j] = 10 * i + j;
  omp_target_memcpy(d, m, sizeof(m), 0, 0, dev, host);
  omp_target_memcpy(d2, zero, 12 * sizeof(int), 0, 0, dev, host);
  size_t v2[2] = {2, 3}, so[2] = {1, 1}, dO[2] = {0, 0}, sd[2] = {4, 5}, dd[2] = {3, 4};
  int r4 = omp_target_memcpy_rect(d2, d, sizeof(int), 2, v2, dO, so, dd, sd, dev, dev);
  int res[3][4];
  omp_target_memcpy(res, d2, sizeof(res), 0, 0, host, dev);
  printf("d2d rc=%d res=", r4);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) printf("%d%s", res[i][j], (i == 2 && j == 3) ? "\n" : " ");
  if (r4 || res[0][0] != 11 || res[1][2] != 23 || res[0][3] != 0 || res[2][0] != 0) errors++;

  /* query form */
  int q = omp_target_memcpy_rect(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, dev, host);
  printf("max dims > 2: %d\n", q > 2);

  omp_target_free(d, dev);
  omp_target_free(d2, dev);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
