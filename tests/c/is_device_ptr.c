// is_device_ptr with memory from omp_target_alloc, and has_device_addr /
// use_device_ptr / use_device_addr round trips.
#include <omp.h>
#include <stdio.h>

#define N 32

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int host_dev = omp_get_initial_device();

  int *d = (int *)omp_target_alloc(N * sizeof(int), dev);
  printf("alloc: %s\n", d ? "ok" : "null");
  if (!d) {
    printf("FAIL\n");
    return 0;
  }
#pragma omp target is_device_ptr(d)
  {
    for (int i = 0; i < N; ++i) d[i] = i * i;
  }
  int h[N];
  int rc = omp_target_memcpy(h, d, N * sizeof(int), 0, 0, host_dev, dev);
  printf("memcpy rc=%d h[5]=%d h[31]=%d\n", rc, h[5], h[31]);
  if (rc != 0 || h[5] != 25 || h[31] != 961) errors++;

  /* use the device buffer again in a second region */
  int s = 0;
#pragma omp target is_device_ptr(d) map(tofrom : s)
  {
    for (int i = 0; i < N; ++i) s += d[i];
  }
  printf("sum of squares=%d\n", s);
  if (s != 10416) errors++;

  /* use_device_ptr: obtain the device address of a mapped buffer */
  int buf[N];
  for (int i = 0; i < N; ++i) buf[i] = 1;
  int *bp = buf;
  int *dev_bp = NULL;
#pragma omp target data map(tofrom : bp[0:N])
  {
#pragma omp target data use_device_ptr(bp)
    { dev_bp = bp; }
    printf("use_device_ptr differs from host: %d\n", dev_bp != buf);
    if (dev_bp == buf) errors++;
    printf("omp_get_mapped_ptr matches: %d\n", omp_get_mapped_ptr(buf, dev) == (void *)dev_bp);
    if (omp_get_mapped_ptr(buf, dev) != (void *)dev_bp) errors++;
#pragma omp target is_device_ptr(dev_bp)
    {
      for (int i = 0; i < N; ++i) dev_bp[i] = 2;
    }
  }
  printf("buf[0]=%d buf[31]=%d after is_device_ptr write + data exit\n", buf[0], buf[31]);
  if (buf[0] != 2 || buf[31] != 2) errors++;

  /* use_device_addr on an array */
  int arr[4] = {9, 9, 9, 9};
#pragma omp target data map(to : arr)
  {
#pragma omp target data use_device_addr(arr)
    {
      int *da = arr;
      int st = omp_target_memcpy(da, h, 4 * sizeof(int), 0, 0, dev, host_dev);
      printf("memcpy into use_device_addr rc=%d\n", st);
    }
#pragma omp target update from(arr)
  }
  printf("arr=%d %d %d %d\n", arr[0], arr[1], arr[2], arr[3]);
  if (arr[0] != 0 || arr[1] != 1 || arr[2] != 4 || arr[3] != 9) errors++;

  /* has_device_addr */
  int *d2 = (int *)omp_target_alloc(sizeof(int) * 4, dev);
#pragma omp target has_device_addr(d2[0:4])
  {
    d2[0] = 42;
  }
  int v = 0;
  omp_target_memcpy(&v, d2, sizeof(int), 0, 0, host_dev, dev);
  printf("has_device_addr v=%d\n", v);
  if (v != 42) errors++;

  omp_target_free(d2, dev);
  omp_target_free(d, dev);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
