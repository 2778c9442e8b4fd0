// Several processes sharing one GPU (issue #14): each phase maps GIB GiB (map(alloc), so the
// host array is never touched) in one target region that writes one double per MiB, then the
// process idles IDLE_MS. Run several copies at once (with start offsets) and check that every
// phase of every process succeeds.
// usage: gpu_share GIB PHASES IDLE_MS [START_DELAY_MS] [LABEL]
// prints: share label=L phase=K gib=G t_ms=T region_ms=R check=ok|WRONG   (T: since the epoch)
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static double now_ms(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: gpu_share GIB PHASES IDLE_MS [START_DELAY_MS] [LABEL]\n");
    return 2;
  }
  double gib = atof(argv[1]);
  int phases = atoi(argv[2]);
  long idle = atol(argv[3]);
  long delay = argc > 4 ? atol(argv[4]) : 0;
  const char *label = argc > 5 ? argv[5] : "p";
  long n = (long)(gib * 1024 * 1024 * 1024 / sizeof(double));
  long stride = 1024 * 1024 / sizeof(double);
  double *a = malloc((size_t)n * sizeof(double)); /* never touched on the host */
  if (!a) {
    fprintf(stderr, "host malloc of %.1f GiB failed\n", gib);
    return 2;
  }
  sleep_ms(delay);
  int bad = 0;
  for (int k = 0; k < phases; ++k) {
    double t0 = now_ms();
    long sum = 0;
#pragma omp target teams distribute parallel for map(alloc : a[0:n]) reduction(+ : sum)
    for (long i = 0; i < n; i += stride) {
      a[i] = (double)i;
      sum += (long)(a[i] == (double)i);
    }
    double t1 = now_ms();
    int ok = sum == (n + stride - 1) / stride;
    bad += !ok;
    printf("share label=%s phase=%d gib=%.1f t_ms=%.0f region_ms=%.1f check=%s\n", label, k, gib, t1,
           t1 - t0, ok ? "ok" : "WRONG");
    fflush(stdout);
    if (k + 1 < phases) sleep_ms(idle);
  }
  free(a);
  return bad ? 1 : 0;
}
