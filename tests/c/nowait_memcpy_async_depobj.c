// omp_target_memcpy_async and omp_target_memcpy_rect_async with dependence
// objects made by '#pragma omp depobj'. The copies are tasks that take part
// in the dependence graph of the encountering task: they are ordered after
// (and before) target nowait tasks with matching depend clauses, and
// complete by the next taskwait.
#include <omp.h>
#include <stdio.h>

#define N 64
#define R 8 /* device matrix R x R */
#define H 6 /* host matrix H x H */

int main(void) {
  int errors = 0;
  int host = omp_get_initial_device();
  int dev = omp_get_default_device();
  int x = 0, y = 0; /* dependence tokens */

  /* 1: device fill (target nowait, out: x) -> copy d->h (depobj inout: x)
        -> device negate (target nowait, inout: x) -> copy d->h again */
  int *d = (int *)omp_target_alloc(N * sizeof(int), dev);
  int h1[N], h2[N];
  for (int i = 0; i < N; ++i) h1[i] = h2[i] = -999;
#pragma omp target nowait depend(out : x) is_device_ptr(d) device(dev)
  {
    for (int i = 0; i < N; ++i) d[i] = i * i;
  }
  omp_depend_t ox;
#pragma omp depobj(ox) depend(inout : x)
  int rc1 = omp_target_memcpy_async(h1, d, N * sizeof(int), 0, 0, host, dev, 1, &ox);
#pragma omp target nowait depend(inout : x) is_device_ptr(d) device(dev)
  {
    for (int i = 0; i < N; ++i) d[i] = -d[i];
  }
  /* copy only the upper half, with offsets on both sides */
  int rc2 = omp_target_memcpy_async(h2, d, (N / 2) * sizeof(int), (N / 2) * sizeof(int),
                                    (N / 2) * sizeof(int), host, dev, 1, &ox);
#pragma omp taskwait
  printf("memcpy_async rc=%d %d h1[0]=%d h1[63]=%d h2[0]=%d h2[32]=%d h2[63]=%d\n", rc1, rc2,
         h1[0], h1[N - 1], h2[0], h2[N / 2], h2[N - 1]);
  if (rc1 || rc2) errors++;
  for (int i = 0; i < N; ++i) {
    if (h1[i] != i * i) errors++;
    if (h2[i] != (i < N / 2 ? -999 : -i * i)) errors++;
  }

  /* 2: the copy as a predecessor: h->d copy (depobj updated to out: x)
        -> target nowait reading the buffer (depend in: x) */
  int src[N], sum = -1;
  for (int i = 0; i < N; ++i) src[i] = 2 * i + 1;
#pragma omp depobj(ox) update(out)
  int rc3 = omp_target_memcpy_async(d, src, N * sizeof(int), 0, 0, dev, host, 1, &ox);
#pragma omp target nowait depend(in : x) is_device_ptr(d) map(from : sum) device(dev)
  {
    int s = 0;
    for (int i = 0; i < N; ++i) s += d[i];
    sum = s;
  }
#pragma omp taskwait
  printf("h->d memcpy_async rc=%d device sum=%d\n", rc3, sum);
  if (rc3 || sum != N * N) errors++;

  /* 3: rect copy of a 4x4 block from a device R x R matrix (rows 2..5,
        cols 1..4) into a host H x H matrix at (1,1); the device matrix is
        filled by a target nowait task (out: y), the copy depends on two
        depobjs (in: y and inout: x) */
  int *dm = (int *)omp_target_alloc(R * R * sizeof(int), dev);
  int hm[H][H];
  for (int i = 0; i < H; ++i)
    for (int j = 0; j < H; ++j) hm[i][j] = 0;
#pragma omp target nowait depend(out : y) is_device_ptr(dm) device(dev)
  {
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < R; ++j) dm[i * R + j] = 10 * i + j;
  }
  omp_depend_t objs[2];
#pragma omp depobj(objs[0]) depend(in : y)
#pragma omp depobj(objs[1]) depend(inout : x)
  size_t volume[2] = {4, 4};
  size_t dst_off[2] = {1, 1}, src_off[2] = {2, 1};
  size_t dst_dims[2] = {H, H}, src_dims[2] = {R, R};
  int rc4 = omp_target_memcpy_rect_async(hm, dm, sizeof(int), 2, volume, dst_off, src_off,
                                         dst_dims, src_dims, host, dev, 2, objs);
#pragma omp taskwait
  printf("memcpy_rect_async rc=%d\n", rc4);
  for (int i = 0; i < H; ++i) {
    printf(" ");
    for (int j = 0; j < H; ++j) printf(" %2d", hm[i][j]);
    printf("\n");
  }
  if (rc4) errors++;
  for (int i = 0; i < H; ++i)
    for (int j = 0; j < H; ++j) {
      int in = i >= 1 && i < 5 && j >= 1 && j < 5;
      int expect = in ? 10 * (i - 1 + 2) + (j - 1 + 1) : 0;
      if (hm[i][j] != expect) errors++;
    }

  /* 4: rect copy host -> device as the predecessor of a target nowait */
  int hs[H][H];
  for (int i = 0; i < H; ++i)
    for (int j = 0; j < H; ++j) hs[i][j] = 100 + 10 * i + j;
  int zero[R * R];
  for (int i = 0; i < R * R; ++i) zero[i] = 0;
  omp_target_memcpy(dm, zero, sizeof zero, 0, 0, dev, host);
#pragma omp depobj(objs[0]) update(out)
  size_t vol2[2] = {2, 3}, dof2[2] = {5, 4}, sof2[2] = {3, 2};
  int rc5 = omp_target_memcpy_rect_async(dm, hs, sizeof(int), 2, vol2, dof2, sof2, src_dims,
                                         dst_dims, dev, host, 1, objs);
  int dsum = -1, dcount = -1;
#pragma omp target nowait depend(in : y) is_device_ptr(dm) map(from : dsum, dcount) device(dev)
  {
    int s = 0, c = 0;
    for (int i = 0; i < R * R; ++i)
      if (dm[i]) {
        s += dm[i];
        c++;
      }
    dsum = s;
    dcount = c;
  }
#pragma omp taskwait
  /* rows 3..4, cols 2..4 of hs: 132+133+134+142+143+144 */
  printf("h->d memcpy_rect_async rc=%d nonzero=%d sum=%d\n", rc5, dcount, dsum);
  if (rc5 || dcount != 6 || dsum != 828) errors++;

#pragma omp depobj(ox) destroy
#pragma omp depobj(objs[0]) destroy
#pragma omp depobj(objs[1]) destroy
  omp_target_free(d, dev);
  omp_target_free(dm, dev);

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
