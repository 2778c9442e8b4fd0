// Several processes sharing one GPU (the memory pool must give back what it caches): each phase maps GIB GiB (map(alloc), so the
// host array is never touched) with `target enter data`, runs one target region that writes
// one double per MiB, keeps the mapping HOLD_MS, unmaps it, then the process idles IDLE_MS.
// Run several copies at once (with start offsets) and check that every phase of every process
// succeeds.
// usage: gpu_share GIB PHASES IDLE_MS [START_DELAY_MS] [LABEL] [HOLD_MS]
// prints: share label=L phase=K gib=G t_ms=T region_ms=R check=ok|WRONG   (T: since the epoch)
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
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
    fprintf(stderr, "usage: gpu_share GIB PHASES IDLE_MS [START_DELAY_MS] [LABEL] [HOLD_MS]\n");
    return 2;
  }
  double gib = atof(argv[1]);
  int phases = atoi(argv[2]);
  long idle = atol(argv[3]);
  long delay = argc > 4 ? atol(argv[4]) : 0;
  const char *label = argc > 5 ? argv[5] : "p";
  long hold = argc > 6 ? atol(argv[6]) : 0;
  long n = (long)(gib * 1024 * 1024 * 1024 / sizeof(double));
  long stride = 1024 * 1024 / sizeof(double);
  /* Never touched on the host; MAP_NORESERVE so that sizes beyond the host's memory work. */
  double *a = mmap(NULL, (size_t)n * sizeof(double), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (a == MAP_FAILED) {
    fprintf(stderr, "host malloc of %.1f GiB failed\n", gib);
    return 2;
  }
  sleep_ms(delay);
  int bad = 0;
  for (int k = 0; k < phases; ++k) {
    double t0 = now_ms();
    long sum = 0;
#pragma omp target enter data map(alloc : a[0:n])
#pragma omp target teams distribute parallel for map(alloc : a[0:n]) reduction(+ : sum)
    for (long i = 0; i < n; i += stride) {
      a[i] = (double)i;
      sum += (long)(a[i] == (double)i);
    }
    double t1 = now_ms();
    sleep_ms(hold);
#pragma omp target exit data map(delete : a[0:n])
    int ok = sum == (n + stride - 1) / stride;
    bad += !ok;
    printf("share label=%s phase=%d gib=%.1f t_ms=%.0f region_ms=%.1f check=%s\n", label, k, gib, t1,
           t1 - t0, ok ? "ok" : "WRONG");
    fflush(stdout);
    if (k + 1 < phases) sleep_ms(idle);
  }
  munmap(a, (size_t)n * sizeof(double));
  return bad ? 1 : 0;
}
