// The asynchronous memory routines (OpenMP 5.2 §18.8.7, §18.8.9, §18.8.11 / 6.0 memset):
// omp_target_memcpy_async, omp_target_memcpy_rect_async and omp_target_memset_async, each
// ordered by depend objects against tasks before it (their results are what the tasks left)
// and before tasks after it (which see its results), without depend objects (complete at
// taskwait), with zero lengths, and on the host device. What each returns is printed.
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define N 256

static unsigned char pattern(int i) { return (unsigned char)(i * 7 + 3); }

int main(void) {
  int dev = 0, host = omp_get_initial_device();
  unsigned char *d = omp_target_alloc(N, dev);
  unsigned char *d2 = omp_target_alloc(N, dev);
  unsigned char h[N], back[N], seen[N];
  int x = 0, errors = 0;
  if (!d || !d2) {
    printf("alloc failed\n");
    return 1;
  }
  for (int i = 0; i < N; ++i) h[i] = pattern(i);

#pragma omp parallel num_threads(4)
#pragma omp single
  {
    omp_depend_t dep;
#pragma omp depobj(dep) depend(inout : x)

    // 1. memset after a task that writes the same buffer (depend out on x): the memset's
    //    bytes are what remains.
#pragma omp task depend(out : x) shared(h)
    {
      usleep(20000);
      omp_target_memcpy(d, h, N, 0, 0, dev, host);
    }
    void *r = omp_target_memset_async(d, 0x5a, N, dev, 1, &dep);
    printf("memset_async returned the pointer: %d\n", r == (void *)d);
    // 2. A task after it (depend in on x) sees the memset.
#pragma omp task depend(in : x) shared(seen)
    omp_target_memcpy(seen, d, N, 0, 0, host, dev);
#pragma omp taskwait
    int ok = 1;
    for (int i = 0; i < N; ++i) ok &= seen[i] == 0x5a;
    printf("memset after the writing task, seen by the next task: %s\n", ok ? "ok" : "WRONG");
    errors += !ok;

    // 3. memcpy_async after a task that memsets the source, then a task that reads the
    //    destination.
#pragma omp task depend(inout : x)
    {
      usleep(20000);
      omp_target_memset(d, 0x21, N, dev);
    }
    int rc = omp_target_memcpy_async(d2, d, N, 0, 0, dev, dev, 1, &dep);
    printf("memcpy_async returned %d\n", rc);
#pragma omp task depend(in : x) shared(seen)
    omp_target_memcpy(seen, d2, N, 0, 0, host, dev);
#pragma omp taskwait
    ok = 1;
    for (int i = 0; i < N; ++i) ok &= seen[i] == 0x21;
    printf("device-to-device memcpy_async between two tasks: %s\n", ok ? "ok" : "WRONG");
    errors += !ok;

    // 4. Without depend objects: done at the taskwait; with offsets, host to device and back.
    rc = omp_target_memcpy_async(d, h, N / 2, 16, 32, dev, host, 0, NULL);
    printf("memcpy_async (no deps) returned %d\n", rc);
#pragma omp taskwait
    memset(back, 0, N);
    omp_target_memcpy(back, d, N, 0, 0, host, dev);
    ok = 1;
    for (int i = 0; i < N; ++i) {
      unsigned char want = (i >= 16 && i < 16 + N / 2) ? pattern(i - 16 + 32) : 0x21;
      ok &= back[i] == want;
    }
    printf("memcpy_async with offsets: %s\n", ok ? "ok" : "WRONG");
    errors += !ok;

    // 5. memcpy_rect_async: a 4 x 8 block of a 16 x 16 host matrix to (2, 4) of the device's.
    size_t vol[2] = {4, 8}, doff[2] = {2, 4}, soff[2] = {1, 3}, dims[2] = {16, 16};
    omp_target_memset(d, 0, N, dev);
    rc = omp_target_memcpy_rect_async(d, h, 1, 2, vol, doff, soff, dims, dims, dev, host, 1,
                                      &dep);
    printf("memcpy_rect_async returned %d\n", rc);
#pragma omp taskwait
    omp_target_memcpy(back, d, N, 0, 0, host, dev);
    ok = 1;
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 16; ++j) {
        int in = i >= 2 && i < 6 && j >= 4 && j < 12;
        unsigned char want = in ? h[(i - 2 + 1) * 16 + (j - 4 + 3)] : 0;
        ok &= back[i * 16 + j] == want;
      }
    printf("memcpy_rect_async block: %s\n", ok ? "ok" : "WRONG");
    errors += !ok;
    // Its query form: the most dimensions supported.
    rc = omp_target_memcpy_rect_async(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, dev,
                                      host, 0, NULL);
    printf("memcpy_rect_async query: %s\n", rc > 0 ? "positive" : "not positive");

    // 6. Zero lengths: nothing happens, and the routines say so as the synchronous ones do.
    r = omp_target_memset_async(d, 0x77, 0, dev, 0, NULL);
    rc = omp_target_memcpy_async(d, h, 0, 0, 0, dev, host, 0, NULL);
#pragma omp taskwait
    omp_target_memcpy(back, d, 1, 0, 0, host, dev);
    printf("zero-length memset_async returned the pointer: %d, memcpy_async %d, byte 0 kept: %d\n",
           r == (void *)d, rc, back[0] == 0);

    // 7. On the host device: memset_async of host memory, ordered after a task.
#pragma omp task depend(out : x) shared(back)
    {
      usleep(10000);
      memset(back, 1, N);
    }
    r = omp_target_memset_async(back, 0x33, N / 2, host, 1, &dep);
#pragma omp taskwait
    ok = r == (void *)back;
    for (int i = 0; i < N; ++i) ok &= back[i] == (i < N / 2 ? 0x33 : 1);
    printf("host memset_async after the writing task: %s\n", ok ? "ok" : "WRONG");
    errors += !ok;
#pragma omp depobj(dep) destroy
  }
  omp_target_free(d, dev);
  omp_target_free(d2, dev);
  printf("%s\n", errors ? "FAIL" : "PASS");
  return errors != 0;
}
