// Soak and load: many constructs from many threads, every result checked, host RSS sampled.
//
// usage: soak [constructs=1000000] [threads=16] [samples=20]
//
// Each thread repeats a cycle of eight steps, each checked: a map(tofrom) region; enter data,
// a region on the present data, exit data; target update to/from a mapping the thread keeps
// for the whole run; a nowait region completed by taskwait; omp_target_alloc, memcpy both
// ways and free; omp_target_is_present and omp_get_mapped_ptr; a region with a firstprivate
// scalar; a target data region around a region and an update. The run is cut into `samples`
// phases; after each the main thread prints the constructs done so far and VmRSS. At the end
// no per-step mapping may be left and RSS must be flat: after the first two phases (warm-up:
// queues, caches, libomp's thread pools) it may not grow by more than 4 MiB + 2%.
// Exit status 0 when every check passed and RSS was flat.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 64

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) kb = atol(line + 6);
  fclose(f);
  return kb;
}

static int failures;

#define CHECK(cond, what)                                                            \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      _Pragma("omp atomic") failures++;                                              \
      if (failures < 10) fprintf(stderr, "soak: check failed: %s (thread %d, step %ld)\n", \
                                 what, omp_get_thread_num(), step);                  \
    }                                                                                \
  } while (0)

// One step of a thread's cycle; returns the number of constructs and API calls it made.
static int one_step(long step, int *a, int *kept, int dev) {
  int host = omp_get_initial_device();
  switch (step % 8) {
  case 0: {
    for (int i = 0; i < N; i++) a[i] = i;
#pragma omp target map(tofrom : a[0 : N]) device(dev)
    for (int i = 0; i < N; i++) a[i] += 1;
    CHECK(a[0] == 1 && a[N - 1] == N, "map(tofrom) region");
    return 1;
  }
  case 1: {
    for (int i = 0; i < N; i++) a[i] = 2 * i;
#pragma omp target enter data map(to : a[0 : N]) device(dev)
#pragma omp target map(present, alloc : a[0 : N]) device(dev)
    for (int i = 0; i < N; i++) a[i] += 3;
#pragma omp target exit data map(from : a[0 : N]) device(dev)
    CHECK(a[5] == 13 && !omp_target_is_present(a, dev), "enter, region, exit");
    return 3;
  }
  case 2: {
    for (int i = 0; i < N; i++) kept[i] = (int)(step & 0xffff) + i;
#pragma omp target update to(kept[0 : N]) device(dev)
#pragma omp target map(alloc : kept[0 : N]) device(dev)
    for (int i = 0; i < N; i++) kept[i] *= 2;
#pragma omp target update from(kept[0 : N]) device(dev)
    CHECK(kept[1] == 2 * ((int)(step & 0xffff) + 1), "update to/from a kept mapping");
    return 3;
  }
  case 3: {
    for (int i = 0; i < N; i++) a[i] = 7;
#pragma omp target map(tofrom : a[0 : N]) nowait device(dev)
    for (int i = 0; i < N; i++) a[i] += 1;
#pragma omp taskwait
    CHECK(a[N / 2] == 8, "nowait region");
    return 1;
  }
  case 4: {
    int *d = omp_target_alloc(N * sizeof(int), dev);
    CHECK(d != NULL, "omp_target_alloc");
    if (!d) return 1;
    for (int i = 0; i < N; i++) a[i] = -i;
    int r1 = omp_target_memcpy(d, a, N * sizeof(int), 0, 0, dev, host);
    memset(a, 0, N * sizeof(int));
    int r2 = omp_target_memcpy(a, d, N * sizeof(int), 0, 0, host, dev);
    omp_target_free(d, dev);
    CHECK(r1 == 0 && r2 == 0 && a[9] == -9, "alloc, memcpy both ways, free");
    return 4;
  }
  case 5: {
    void *p = omp_get_mapped_ptr(kept, dev);
    CHECK(omp_target_is_present(kept, dev) && p != NULL, "is_present / get_mapped_ptr");
    CHECK(!omp_target_is_present(a, dev), "no stale mapping");
    return 2;
  }
  case 6: {
    int scalar = (int)(step % 1000), out = 0;
#pragma omp target firstprivate(scalar) map(from : out) device(dev)
    out = scalar * 3;
    CHECK(out == (int)(step % 1000) * 3, "firstprivate region");
    return 1;
  }
  default: {
    for (int i = 0; i < N; i++) a[i] = i;
#pragma omp target data map(tofrom : a[0 : N]) device(dev)
    {
#pragma omp target device(dev)
      for (int i = 0; i < N; i++) a[i] += 10;
#pragma omp target update from(a[0 : N]) device(dev)
      CHECK(a[3] == 13, "target data, region, update");
    }
    return 4;
  }
  }
}

int main(int argc, char **argv) {
  long total = argc > 1 ? atol(argv[1]) : 1000000;
  int threads = argc > 2 ? atoi(argv[2]) : 16;
  int samples = argc > 3 ? atoi(argv[3]) : 20;
  if (samples < 3) samples = 3;
  int ndev = omp_get_num_devices();
  printf("soak: %ld constructs, %d threads, %d samples, %d devices\n", total, threads, samples,
         ndev);
  if (ndev < 1) {
    printf("soak: no device\n");
    return 1;
  }
  long *rss = calloc(samples, sizeof(long));
  long done = 0;
  // Per-thread data, and the mapping each thread keeps for the whole run.
  int *data = calloc((size_t)threads * 2 * N, sizeof(int));
  for (int t = 0; t < threads; t++) {
    int *kept = data + (size_t)t * 2 * N + N;
    int dev = t % ndev;
#pragma omp target enter data map(alloc : kept[0 : N]) device(dev)
  }
  long *cycle = calloc(threads, sizeof(long));
  double t0 = omp_get_wtime();
  for (int s = 0; s < samples; s++) {
    long goal = total * (s + 1) / samples;
#pragma omp parallel num_threads(threads)
    {
      int t = omp_get_thread_num();
      int *a = data + (size_t)t * 2 * N, *kept = a + N;
      int dev = t % ndev;
      // Each thread does its share of this phase's constructs, continuing its own cycle.
      long quota = (goal - total * s / samples + threads - 1) / threads;
      for (long mine = 0; mine < quota; cycle[t]++)
        mine += one_step(cycle[t], a, kept, dev);
    }
    done = 0;
    for (int t = 0; t < threads; t++) done += cycle[t];
    rss[s] = rss_kb();
    printf("sample %d steps=%ld rss_kb=%ld seconds=%.2f\n", s, done, rss[s],
           omp_get_wtime() - t0);
    fflush(stdout);
  }
  long step = -1; // for CHECK
  for (int t = 0; t < threads; t++) {
    int *kept = data + (size_t)t * 2 * N + N;
    int dev = t % ndev;
#pragma omp target exit data map(delete : kept[0 : N]) device(dev)
    CHECK(!omp_target_is_present(kept, dev), "kept mapping released");
  }
  long base = rss[1], max = rss[1];
  for (int s = 1; s < samples; s++) max = rss[s] > max ? rss[s] : max;
  long allowed = 4096 + base / 50;
  int flat = rss[samples - 1] - base <= allowed && max - base <= allowed;
  printf("soak: %ld steps in %.2f s, rss after warm-up %ld kB, last %ld kB, max %ld kB: %s\n",
         done, omp_get_wtime() - t0, base, rss[samples - 1], max, flat ? "flat" : "GROWING");
  printf("soak: %d failed checks\n", failures);
  free(rss);
  free(cycle);
  free(data);
  return failures || !flat ? 1 : 0;
}
