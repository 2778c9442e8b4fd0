// Host memcpy bandwidth with 1..N threads (each thread copies its own share of a 256 MiB
// buffer into another), to tell whether staging through pinned buffers is bound by the host.
// usage: memcpy_bw [max_threads=16]
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIZE (256L << 20)
static char *src, *dst;
static long share;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *work(void *arg) {
  long i = (long)arg;
  memcpy(dst + i * share, src + i * share, (size_t)share);
  return NULL;
}

int main(int argc, char **argv) {
  int max = argc > 1 ? atoi(argv[1]) : 16;
  src = malloc(SIZE);
  dst = malloc(SIZE);
  if (!src || !dst) return 1;
  memset(src, 1, SIZE);
  memset(dst, 2, SIZE);
  for (int n = 1; n <= max; n *= 2) {
    share = SIZE / n;
    double best = 1e9;
    for (int r = 0; r < 5; ++r) {
      pthread_t t[64];
      double t0 = now();
      for (long i = 0; i < n; ++i) pthread_create(&t[i], NULL, work, (void *)i);
      for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
      double dt = now() - t0;
      if (dt < best) best = dt;
    }
    printf("memcpy threads=%d GB/s=%.1f\n", n, SIZE / best / 1e9);
  }
  return 0;
}
