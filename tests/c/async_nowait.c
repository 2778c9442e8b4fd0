// Asynchronous offloading: target nowait with depend clauses, target
// enter/exit data nowait, taskwait, and omp_target_memcpy_async.
#include <omp.h>
#include <stdio.h>

#define N 256

int main(void) {
  int errors = 0;
  static int a[N], b[N];
  for (int i = 0; i < N; ++i) {
    a[i] = i;
    b[i] = 0;
  }

#pragma omp target enter data map(to : a) map(alloc : b) nowait depend(out : a, b)
#pragma omp target nowait depend(inout : a) depend(out : b)
  {
    for (int i = 0; i < N; ++i) {
      a[i] += 1;
      b[i] = a[i] * 2;
    }
  }
#pragma omp target nowait depend(inout : b)
  {
    for (int i = 0; i < N; ++i) b[i] += 1;
  }
#pragma omp target exit data map(from : a, b) nowait depend(in : a, b)
#pragma omp taskwait
  printf("a[0]=%d a[255]=%d b[0]=%d b[255]=%d\n", a[0], a[N - 1], b[0], b[N - 1]);
  for (int i = 0; i < N; ++i)
    if (a[i] != i + 1 || b[i] != 2 * (i + 1) + 1) errors++;

  /* independent nowait regions on different devices, joined by taskwait */
  int r[4] = {0, 0, 0, 0};
  int ndev = omp_get_num_devices();
  for (int d = 0; d < 4 && d < ndev; ++d) {
#pragma omp target device(d) map(from : r[d:1]) nowait
    { r[d] = (d + 1) * 100; }
  }
#pragma omp taskwait
  printf("r=%d %d %d %d\n", r[0], r[1], r[2], r[3]);
  if (r[0] != 100 || r[3] != 400) errors++;

  /* target update nowait */
  int v = 1;
#pragma omp target enter data map(to : v)
#pragma omp target map(tofrom : v)
  { v = 2; }
#pragma omp target update from(v) nowait
#pragma omp taskwait
  printf("v after update nowait=%d\n", v);
  if (v != 2) errors++;
#pragma omp target exit data map(delete : v)

  /* omp_target_memcpy_async with a dependence object list of zero */
  int host = omp_get_initial_device();
  int src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dst[8] = {0};
  int *dbuf = omp_target_alloc(sizeof src, 0);
  int rc1 = omp_target_memcpy_async(dbuf, src, sizeof src, 0, 0, 0, host, 0, NULL);
#pragma omp taskwait
  int rc2 = omp_target_memcpy_async(dst, dbuf, sizeof dst, 0, 0, host, 0, 0, NULL);
#pragma omp taskwait
  printf("memcpy_async rc=%d %d dst[7]=%d\n", rc1, rc2, dst[7]);
  if (rc1 || rc2 || dst[7] != 8) errors++;
  omp_target_free(dbuf, 0);

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
