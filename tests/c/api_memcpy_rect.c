// omp_target_memcpy_rect: copy a 2-D and a 3-D sub-rectangle between host
// and device, and the query form (NULL dst and src returns max dims).
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int host = omp_get_initial_device();
  int dev = 0;
  enum { R = 6, C = 8 };
  int h[R][C], back[R][C];
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) {
      h[i][j] = i * 10 + j;
      back[i][j] = -1;
    }
  int maxdims = omp_target_memcpy_rect(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, dev, host);
  printf("max dims=%d\n", maxdims);
  if (maxdims < 3) errors++;

  int *d = omp_target_alloc(sizeof h, dev);
  /* zero the device copy, then copy a 3x4 block at (1,2) into (2,3) */
  int zeros[R][C] = {{0}};
  omp_target_memcpy(d, zeros, sizeof zeros, 0, 0, dev, host);
  size_t vol[2] = {3, 4};
  size_t dst_off[2] = {2, 3};
  size_t src_off[2] = {1, 2};
  size_t dims[2] = {R, C};
  int rc = omp_target_memcpy_rect(d, h, sizeof(int), 2, vol, dst_off, src_off, dims, dims, dev,
                                  host);
  printf("rect h->d rc=%d\n", rc);
  if (rc) errors++;
  rc = omp_target_memcpy(back, d, sizeof back, 0, 0, host, dev);
  for (int i = 0; i < R; ++i) {
    for (int j = 0; j < C; ++j) {
      printf("%3d", back[i][j]);
      int in = i >= 2 && i < 5 && j >= 3 && j < 7;
      int expect = in ? h[i - 1][j - 1] : 0;
      if (back[i][j] != expect) errors++;
    }
    printf("\n");
  }

  /* rectangle from device back into a different-shaped host array */
  int small[3][4];
  size_t sdims[2] = {3, 4};
  size_t zoff[2] = {0, 0};
  rc = omp_target_memcpy_rect(small, d, sizeof(int), 2, vol, zoff, dst_off, sdims, dims, host, dev);
  printf("rect d->h rc=%d small[0][0]=%d small[2][3]=%d\n", rc, small[0][0], small[2][3]);
  if (rc || small[0][0] != 12 || small[2][3] != 35) errors++;

  /* 3-D */
  int cube[2][3][4], cube2[2][3][4];
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) {
        cube[a][b][c] = 100 * a + 10 * b + c;
        cube2[a][b][c] = 0;
      }
  int *dc = omp_target_alloc(sizeof cube, dev);
  omp_target_memcpy(dc, cube2, sizeof cube2, 0, 0, dev, host);
  size_t v3[3] = {2, 2, 2}, o3[3] = {0, 1, 2}, d3[3] = {2, 3, 4};
  rc = omp_target_memcpy_rect(dc, cube, sizeof(int), 3, v3, o3, o3, d3, d3, dev, host);
  rc |= omp_target_memcpy(cube2, dc, sizeof cube2, 0, 0, host, dev);
  int nz = 0;
  long s = 0;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        if (cube2[a][b][c]) {
          nz++;
          s += cube2[a][b][c];
        }
  printf("3-D rect rc=%d nonzero=%d sum=%ld\n", rc, nz, s);
  /* copied: a in {0,1}, b in {1,2}, c in {2,3} -> 8 elements */
  if (rc || nz != 8 || s != 4 * 100 + 4 * 30 + 4 * 5) errors++;

  omp_target_free(dc, dev);
  omp_target_free(d, dev);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
