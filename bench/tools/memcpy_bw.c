// Host copy bandwidth with 1..N threads (each thread copies its own share of a 256 MiB
// buffer into another), to tell whether staging through pinned buffers is bound by the host:
// `memcpy` of each share at once, then in 1 MiB pieces with `memcpy` and with non-temporal
// (streaming) stores, as the CUDA plugin fills and empties staging buffers
// (crates/plugins/cuda/src/staging/bytes.rs); then one array copied again and again.
// usage: memcpy_bw [max_threads=16]
#include <emmintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIZE (256L << 20)
#define PIECE (1L << 20)
static char *src, *dst;
static long share;
static int mode;  // 0: memcpy of the share, 1: memcpy by piece, 2: streaming stores by piece

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void line(char *d, const char *s) {
  __m128i a = _mm_loadu_si128((const __m128i *)s);
  __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
  __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
  __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
  _mm_stream_si128((__m128i *)d, a);
  _mm_stream_si128((__m128i *)(d + 16), b);
  _mm_stream_si128((__m128i *)(d + 32), c);
  _mm_stream_si128((__m128i *)(d + 48), e);
}

// As staging/bytes.rs: align the destination to a cache line, then four pages at a time, a
// line of each in turn, then lines, then the rest; a store fence at the end.
static void stream(char *d, const char *s, long n) {
  const long page = 4096;
  long head = (long)((64 - ((uintptr_t)d & 63)) & 63);
  if (head > n) head = n;
  memcpy(d, s, (size_t)head);
  long i = head;
  for (; i + 4 * page <= n; i += 4 * page)
    for (long j = 0; j < page; j += 64)
      for (int p = 0; p < 4; ++p) line(d + i + p * page + j, s + i + p * page + j);
  for (; i + 64 <= n; i += 64) line(d + i, s + i);
  memcpy(d + i, s + i, (size_t)(n - i));
  _mm_sfence();
}

static void *work(void *arg) {
  long i = (long)arg;
  char *d = dst + i * share;
  const char *s = src + i * share;
  if (mode == 0) {
    memcpy(d, s, (size_t)share);
    return NULL;
  }
  for (long off = 0; off < share; off += PIECE) {
    long n = share - off < PIECE ? share - off : PIECE;
    if (mode == 1)
      memcpy(d + off, s + off, (size_t)n);
    else
      stream(d + off, s + off, n);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int max = argc > 1 ? atoi(argv[1]) : 16;
  src = malloc(SIZE);
  dst = malloc(SIZE);
  if (!src || !dst) return 1;
  memset(src, 1, SIZE);
  memset(dst, 2, SIZE);
  const char *names[] = {"memcpy", "memcpy-1MiB", "stream-1MiB"};
  for (mode = 0; mode < 3; ++mode) {
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
      printf("%s threads=%d GB/s=%.1f\n", names[mode], n, SIZE / best / 1e9);
    }
  }
  // One array copied into one buffer again and again, both hot in the caches where they fit
  // (the case streaming stores help least): µs per copy.
  for (long n = 1L << 20; n <= 64L << 20; n *= 4) {
    long reps = (1L << 30) / n;
    for (int m = 1; m <= 2; ++m) {
      double best = 1e9;
      for (int r = 0; r < 3; ++r) {
        double t0 = now();
        for (long k = 0; k < reps; ++k) {
          if (m == 1)
            memcpy(dst, src, (size_t)n);
          else
            stream(dst, src, n);
        }
        double dt = (now() - t0) / reps;
        if (dt < best) best = dt;
      }
      printf("%s again MiB=%ld us=%.1f\n", m == 1 ? "memcpy" : "stream", n >> 20, best * 1e6);
    }
  }
  return 0;
}
