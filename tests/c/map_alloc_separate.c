// map(alloc:) and map(to:) without from: device memory is separate from
// host memory on the host-device plugin, so writes in the region are not
// visible on the host afterwards.
#include <omp.h>
#include <stdio.h>

#define N 8

int main(void) {
  int errors = 0;
  int a[N], b[N];
  int out[N];
  for (int i = 0; i < N; ++i) {
    a[i] = i + 1;
    b[i] = 10 * (i + 1);
    out[i] = 0;
  }

  /* alloc: device buffer is not initialised from the host, and nothing is
     copied back. Fill on device, use it, copy results via a from-array. */
#pragma omp target map(alloc : a) map(to : b) map(from : out)
  {
    for (int i = 0; i < N; ++i) {
      a[i] = 50 + i;      /* device-only write */
      b[i] = b[i] + a[i]; /* device-only write */
      out[i] = b[i];
    }
  }
  for (int i = 0; i < N; ++i) {
    if (a[i] != i + 1) errors++;
    if (b[i] != 10 * (i + 1)) errors++;
    if (out[i] != 10 * (i + 1) + 50 + i) errors++;
  }
  printf("host a[0]=%d a[7]=%d (unchanged)\n", a[0], a[7]);
  printf("host b[0]=%d b[7]=%d (unchanged)\n", b[0], b[7]);
  printf("out[0]=%d out[7]=%d\n", out[0], out[7]);

  /* A 'to' mapping is a copy: host writes after the copy are not seen by
     the device while the mapping persists. */
  int x = 1;
#pragma omp target enter data map(to : x)
  x = 2; /* host only */
  int seen = 0;
  /* x is present: map(tofrom:x) only bumps the reference count, no copy.
     (Without a map clause the scalar would be firstprivate.) */
#pragma omp target map(tofrom : x) map(from : seen)
  { seen = x; }
  printf("device sees x=%d while host x=%d\n", seen, x);
  if (seen != 1 || x != 2) errors++;
  /* device write, host keeps its own value */
#pragma omp target map(tofrom : x)
  { x = 3; }
  printf("after device write, host x=%d\n", x);
  if (x != 2) errors++;
#pragma omp target exit data map(from : x)
  printf("after exit data from, host x=%d\n", x);
  if (x != 3) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
