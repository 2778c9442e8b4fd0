// omp_target_alloc / omp_target_free / omp_target_memcpy in all directions
// (host->dev, dev->host, dev->dev on one device and across devices,
// host->host), with offsets; omp_target_memset.
#include <omp.h>
#include <stdio.h>
#include <string.h>

#define N 64

int main(void) {
  int errors = 0;
  int host = omp_get_initial_device();
  int ndev = omp_get_num_devices();
  int d0 = 0, d1 = ndev > 1 ? 1 : 0;

  int src[N], dst[N];
  for (int i = 0; i < N; ++i) {
    src[i] = 3 * i + 1;
    dst[i] = 0;
  }

  int *a = omp_target_alloc(N * sizeof(int), d0);
  int *b = omp_target_alloc(N * sizeof(int), d0);
  int *c = omp_target_alloc(N * sizeof(int), d1);
  printf("allocs: %s %s %s\n", a ? "ok" : "null", b ? "ok" : "null", c ? "ok" : "null");
  if (!a || !b || !c) {
    printf("FAIL\n");
    return 0;
  }
  printf("device pointers not present as host mappings: %d\n", omp_target_is_present(a, d0));

  int rc;
  rc = omp_target_memcpy(a, src, N * sizeof(int), 0, 0, d0, host); /* h->d */
  printf("h->d rc=%d\n", rc);
  if (rc) errors++;
  rc = omp_target_memcpy(b, a, N * sizeof(int), 0, 0, d0, d0); /* d->d same device */
  printf("d->d rc=%d\n", rc);
  if (rc) errors++;
  rc = omp_target_memcpy(c, b, N * sizeof(int), 0, 0, d1, d0); /* d->d cross device */
  printf("d0->d1 rc=%d\n", rc);
  if (rc) errors++;
  rc = omp_target_memcpy(dst, c, N * sizeof(int), 0, 0, host, d1); /* d->h */
  printf("d->h rc=%d dst[0]=%d dst[63]=%d\n", rc, dst[0], dst[63]);
  if (rc || memcmp(src, dst, sizeof src) != 0) errors++;

  /* offsets: copy src[10..19] into device a at element 40, read back */
  rc = omp_target_memcpy(a, src, 10 * sizeof(int), 40 * sizeof(int), 10 * sizeof(int), d0, host);
  int got[N];
  rc |= omp_target_memcpy(got, a, N * sizeof(int), 0, 0, host, d0);
  printf("offset copy rc=%d got[39]=%d got[40]=%d got[49]=%d got[50]=%d\n", rc, got[39],
         got[40], got[49], got[50]);
  if (rc || got[39] != src[39] || got[40] != src[10] || got[49] != src[19] || got[50] != src[50])
    errors++;

  /* device memory written by a kernel, read with memcpy */
#pragma omp target is_device_ptr(b) device(d0)
  {
    for (int i = 0; i < N; ++i) b[i] = -i;
  }
  rc = omp_target_memcpy(dst, b, N * sizeof(int), 0, 0, host, d0);
  printf("kernel-written b: rc=%d dst[7]=%d\n", rc, dst[7]);
  if (rc || dst[7] != -7) errors++;

  /* host->host through the initial device */
  int hh[4] = {0};
  rc = omp_target_memcpy(hh, src, sizeof hh, 0, 0, host, host);
  printf("h->h rc=%d hh=%d %d %d %d\n", rc, hh[0], hh[1], hh[2], hh[3]);
  if (rc || hh[3] != 10) errors++;

  /* zero-size copy succeeds */
  rc = omp_target_memcpy(a, src, 0, 0, 0, d0, host);
  printf("zero-size rc=%d\n", rc);
  if (rc) errors++;

  /* omp_target_memset */
  void *ms = omp_target_memset(a, 0x7f, N * sizeof(int), d0);
  rc = omp_target_memcpy(got, a, N * sizeof(int), 0, 0, host, d0);
  printf("memset returned dst: %d got[0]=0x%08x\n", ms == (void *)a, (unsigned)got[0]);
  if (rc || ms != (void *)a || got[0] != 0x7f7f7f7f) errors++;

  /* allocation on the initial device is host memory */
  int *hm = omp_target_alloc(16, host);
  printf("alloc on initial device: %s\n", hm ? "ok" : "null");
  if (hm) {
    hm[0] = 5; /* usable directly from the host */
    omp_target_free(hm, host);
  } else
    errors++;

  /* zero bytes: NULL; free(NULL) is a no-op */
  void *z = omp_target_alloc(0, d0);
  printf("alloc(0) is %s\n", z ? "non-null" : "NULL");
  omp_target_free(NULL, d0);
  omp_target_free(z, d0);

  omp_target_free(a, d0);
  omp_target_free(b, d0);
  omp_target_free(c, d1);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
