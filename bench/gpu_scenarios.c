// The GPU performance scenarios: per-region time of typical target constructs, for
// `omptarget-suite bench` (prints `scenario=NAME median_us=X ... cpu_us=Y`: the median over reps
// of the mean per-region time, and the process's CPU time per region). Builds for any offload
// target; sizes are meant for an H200.
// usage: gpu_scenarios [all|NAME[,NAME...]] [reps=5] [scale=1]   (scale divides the iteration
//        counts; several names run in the table's order, in one process; "all" may be one of
//        the names, e.g. host_clock,all; the probes host_* and the rows beside_nowait4MiB and
//        beside_fixed4MiB run only when named)
// env: SCEN_READY_FD, SCEN_START_FD: a start barrier for several processes at once (report()).
#include <omp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#endif

#define MiB (1024L * 1024L)

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int reps = 5, scale = 1;
static double buf64[8];

typedef void (*fn_t)(long iters);

/* SCEN_COUNTERS=1: the calling thread's hardware and software counters over a scenario's timed
   repetitions (perf_event_open; the main thread only, which issues every region of the
   single-threaded scenarios), printed per region after the time as `cyc= ins= llcm= dtlbm=
   ipc= ghz= cpu_pct=`, `NAME=none` for each hardware count the machine does not give (a VM
   without a PMU), or `counters=none` when it gives none at all. What tells a process whose host work is slower
   (docs/PERFORMANCE.md, "Why the latency rows vary") apart: the same instructions at fewer instructions per cycle with more cache or TLB misses
   (where its memory lies), a lower clock (ghz), or less of the time on the CPU (cpu_pct). */
enum { C_CYC, C_INS, C_LLCM, C_DTLBM, C_TASK, C_N };
static int counters_fd[C_N], counters_wanted;
static void counters_open(void) {
  for (int i = 0; i < C_N; ++i) counters_fd[i] = -1;
  const char *on = getenv("SCEN_COUNTERS");
  counters_wanted = on && *on && strcmp(on, "0") != 0;
  if (!counters_wanted) return;
#ifdef __linux__
  static const struct {
    unsigned type;
    unsigned long long config;
  } ev[C_N] = {
      {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
      {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
      {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
      {PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
                               (PERF_COUNT_HW_CACHE_RESULT_MISS << 16)},
      {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
  };
  for (int i = 0; i < C_N; ++i) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = ev[i].type;
    a.config = ev[i].config;
    a.disabled = 1;
    a.exclude_hv = 1;
    a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    counters_fd[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
  }
#endif
}
static void counters_set(int on) {
#ifdef __linux__
  for (int i = 0; i < C_N; ++i)
    if (counters_fd[i] >= 0) {
      if (!on) ioctl(counters_fd[i], PERF_EVENT_IOC_DISABLE, 0);
      else ioctl(counters_fd[i], PERF_EVENT_IOC_RESET, 0), ioctl(counters_fd[i], PERF_EVENT_IOC_ENABLE, 0);
    }
#else
  (void)on;
#endif
}
/* The count over the enabled time (scaled where the PMU multiplexed it), or -1. */
static double counter(int i) {
  unsigned long long v[3];
  if (counters_fd[i] < 0 || read(counters_fd[i], v, sizeof v) != (ssize_t)sizeof v || !v[2]) return -1;
  return (double)v[0] * ((double)v[1] / (double)v[2]);
}
static void counters_print(long regions, double wall_s) {
  if (counters_fd[C_TASK] < 0) {
    if (counters_wanted) printf(" counters=none");
    return;
  }
  double c[C_N];
  for (int i = 0; i < C_N; ++i) c[i] = counter(i);
  const char *names[C_N] = {"cyc", "ins", "llcm", "dtlbm", NULL};
  for (int i = 0; i < C_TASK; ++i)
    if (c[i] < 0) printf(" %s=none", names[i]);
    else printf(" %s=%.0f", names[i], c[i] / (double)regions);
  if (c[C_CYC] > 0 && c[C_INS] >= 0) printf(" ipc=%.2f", c[C_INS] / c[C_CYC]);
  if (c[C_CYC] > 0 && c[C_TASK] > 0) printf(" ghz=%.2f", c[C_CYC] / c[C_TASK]);
  printf(" cpu_pct=%.0f", c[C_TASK] / 1e9 / wall_s * 100);
}

/* The process's CPU time so far, user + system, of all its threads (the program's, libomp's
   and the runtime's helpers), in seconds. */
/* With GPU_SCENARIOS_THREAD_CPU set: each thread's CPU time over a scenario's timed repetitions
   (a beside_ row's: over all its loops, alone and beside), in µs, summed by thread name,
   printed on a `threads=` line after the scenario's line: which
   threads (the program's, libomp's, the runtime's, the driver's) take the CPU that cpu_us
   counts. The time on the CPU comes from /proc/self/task/TID/schedstat (ns); where the kernel
   has none, from the clock ticks of .../stat (user + system). */
#define MAX_THREADS 512
static struct thread_cpu {
  int tid;
  char comm[32];
  long long ns;
} cpu_before[MAX_THREADS];
static int n_before;

static int read_thread_cpu(struct thread_cpu *t) {
  DIR *d = opendir("/proc/self/task");
  int n = 0;
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d)) && n < MAX_THREADS;) {
    if (e->d_name[0] == '.') continue;
    char path[96], line[1024];
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t len = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[len] = 0;
    char *open = strchr(line, '('), *close = strrchr(line, ')');
    if (!open || !close) continue;
    size_t cl = (size_t)(close - open - 1) < sizeof t[n].comm - 1 ? (size_t)(close - open - 1) : sizeof t[n].comm - 1;
    memcpy(t[n].comm, open + 1, cl);
    t[n].comm[cl] = 0;
    for (char *c = t[n].comm; *c; ++c)
      if (*c == ' ' || *c == ',' || *c == ':') *c = '_';
    /* fields after the name: state(3) ... utime(14) stime(15) */
    long ut = 0, st = 0;
    char *p = close + 2;
    for (int field = 3; field < 14 && p; ++field) p = strchr(p + 1, ' ');
    if (!p || sscanf(p, " %ld %ld", &ut, &st) != 2) continue;
    t[n].tid = atoi(e->d_name);
    t[n].ns = (long long)(ut + st) * (1000000000LL / sysconf(_SC_CLK_TCK));
    snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
    long long on_cpu;
    if ((f = fopen(path, "r"))) {
      if (fscanf(f, "%lld", &on_cpu) == 1) t[n].ns = on_cpu;
      fclose(f);
    }
    ++n;
  }
  closedir(d);
  return n;
}

static void threads_begin(void) {
  if (getenv("GPU_SCENARIOS_THREAD_CPU")) n_before = read_thread_cpu(cpu_before);
}

static void threads_print(void) {
  if (!getenv("GPU_SCENARIOS_THREAD_CPU")) return;
  static struct thread_cpu now[MAX_THREADS];
  char names[MAX_THREADS][32];
  long long sums[MAX_THREADS];
  int n = read_thread_cpu(now), k = 0;
  for (int i = 0; i < n; ++i) {
    long long d = now[i].ns;
    for (int j = 0; j < n_before; ++j)
      if (cpu_before[j].tid == now[i].tid) d -= cpu_before[j].ns;
    if (d <= 0) continue;
    int j = 0;
    while (j < k && strcmp(names[j], now[i].comm)) ++j;
    if (j == k) {
      strcpy(names[k], now[i].comm);
      sums[k++] = 0;
    }
    sums[j] += d;
  }
  printf("threads= unit=us");
  for (int j = 0; j < k; ++j) printf(" %s:%lld", names[j], sums[j] / 1000);
  printf("\n");
}

static double cpu_s(void) {
  struct rusage u;
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

/* Several processes at once (`omptarget-suite bench --procs N`): SCEN_READY_FD and SCEN_START_FD
   name two pipe ends the harness gives every process. After each scenario's warm-up a process
   writes one byte to the first and waits for one byte from the second; the harness sends the
   bytes once all N processes are ready, so their timed repetitions start together. Unset: no
   waiting. */
static int ready_fd = -1, start_fd = -1;
static void barrier_open(void) {
  const char *r = getenv("SCEN_READY_FD"), *s = getenv("SCEN_START_FD");
  if (r && *r && s && *s) ready_fd = atoi(r), start_fd = atoi(s);
}
static void barrier(void) {
  if (ready_fd < 0 || start_fd < 0) return;
  char c = 'r';
  while (write(ready_fd, &c, 1) < 0 && errno == EINTR) {
  }
  while (read(start_fd, &c, 1) < 0 && errno == EINTR) {
  }
}

/* Set during a scenario's warm-up (kernel1s warms up with a short kernel). */
static int warming;

static void report(const char *name, fn_t f, long iters, int per) {
  iters = iters / scale > 0 ? iters / scale : 1;
  /* kernel1s: one region of a second per repetition, at most 3 of them (the perf mode's time) */
  int n = reps;
  if (!strcmp(name, "kernel1s") && n > 3) n = 3;
  double t[64];
  warming = 1;
  f(iters > 4 ? 4 : 1); /* warm-up */
  warming = 0;
  barrier();
  threads_begin();
  double wall = omp_get_wtime(), cpu = cpu_s();
  counters_set(1);
  for (int r = 0; r < n; ++r) {
    double t0 = omp_get_wtime();
    f(iters);
    t[r] = (omp_get_wtime() - t0) * 1e6 / (double)iters / (double)per;
  }
  counters_set(0);
  cpu = cpu_s() - cpu;
  wall = omp_get_wtime() - wall;
  qsort(t, (size_t)n, sizeof(double), cmp);
  /* cpu_us after the fields older readers know, before the optional counters */
  printf("scenario=%s median_us=%.3f min_us=%.3f reps=%d iters=%ld cpu_us=%.3f", name, t[n / 2], t[0], n,
         iters, cpu * 1e6 / ((double)n * (double)iters * (double)per));
  counters_print((long)n * iters * per, wall);
  printf("\n");
  threads_print();
  fflush(stdout);
}

static void empty(long n) {
  for (long i = 0; i < n; ++i) {
#pragma omp target
    {
    }
  }
}

static void map64(long n) {
  for (long i = 0; i < n; ++i) {
#pragma omp target map(tofrom : buf64[0:8])
    { buf64[i & 7] += 1.0; }
  }
}

static double *big;

static void alloc_n(long n, long bytes, double *a) {
  long len = bytes / (long)sizeof(double);
  for (long i = 0; i < n; ++i) {
#pragma omp target teams distribute parallel for map(alloc : a[0:len])
    for (long j = 0; j < len; ++j) a[j] = (double)j;
  }
}
static void alloc64m(long n) { alloc_n(n, 64 * MiB, big); }
static void alloc1g(long n) { alloc_n(n, 1024 * MiB, big); }

static void enter_exit64m(long n) {
  double *a = big;
  long len = 64 * MiB / (long)sizeof(double);
  for (long i = 0; i < n; ++i) {
#pragma omp target enter data map(alloc : a[0:len])
#pragma omp target teams distribute parallel for
    for (long j = 0; j < len; ++j) a[j] = (double)j;
#pragma omp target exit data map(delete : a[0:len])
  }
}

static void threads8_alloc64m(long n) {
  /* 8 host threads, each running the 64 MiB region on its own array; time per region overall */
#pragma omp parallel num_threads(8)
  {
    double *a = big + (long)omp_get_thread_num() * (64 * MiB / (long)sizeof(double));
    long len = 64 * MiB / (long)sizeof(double);
    for (long i = 0; i < n; ++i) {
#pragma omp target teams distribute parallel for map(alloc : a[0:len])
      for (long j = 0; j < len; ++j) a[j] = (double)j;
    }
  }
}

/* T host threads, each running small `map(tofrom: 64 B)` regions on its own buffer: the
   aggregate time per region shows whether throughput scales or collapses on a lock. */
static double bufs[128][8];
static void threads_map64(long n, int t) {
#pragma omp parallel num_threads(t)
  {
    double *b = bufs[omp_get_thread_num()];
    for (long i = 0; i < n; ++i) {
#pragma omp target map(tofrom : b[0:8])
      { b[i & 7] += 1.0; }
    }
  }
}
static void threads16_map64(long n) { threads_map64(n, 16); }
static void threads32_map64(long n) { threads_map64(n, 32); }
static void threads64_map64(long n) { threads_map64(n, 64); }
static void threads128_map64(long n) { threads_map64(n, 128); }

static void tofrom64m(long n) {
  double *a = big;
  long len = 64 * MiB / (long)sizeof(double);
  for (long i = 0; i < n; ++i) {
#pragma omp target teams distribute parallel for map(tofrom : a[0:len])
    for (long j = 0; j < len; ++j) a[j] += 1.0;
  }
}

static double small[16][128];
/* 16 arrays of 1 KiB in one region, each mapped through its own pointer. (Different sections
   of one array in several map items of a construct are not conforming when none is present
   yet: the map clause's restrictions want such list items to refer to the same elements.
   clang's build of that form wrote through the first section's device copy and crashed on
   the host device under LLVM 19 and ours; GCC 12 rejects it.) */
static void arrays16(long n) {
  double *s0 = small[0], *s1 = small[1], *s2 = small[2], *s3 = small[3], *s4 = small[4],
         *s5 = small[5], *s6 = small[6], *s7 = small[7], *s8 = small[8], *s9 = small[9],
         *s10 = small[10], *s11 = small[11], *s12 = small[12], *s13 = small[13],
         *s14 = small[14], *s15 = small[15];
  for (long i = 0; i < n; ++i) {
#pragma omp target map(tofrom : s0[0:128], s1[0:128], s2[0:128], s3[0:128], s4[0:128], s5[0:128], \
                           s6[0:128], s7[0:128], s8[0:128], s9[0:128], s10[0:128], s11[0:128], \
                           s12[0:128], s13[0:128], s14[0:128], s15[0:128])
    {
      double *s[16] = {s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15};
      for (int k = 0; k < 16; ++k) s[k][i & 127] += 1.0;
    }
  }
}

static void nowait32_4m(long n) {
  long len = 4 * MiB / (long)sizeof(double);
  for (long i = 0; i < n; ++i) {
#pragma omp parallel
#pragma omp single
    {
      for (int r = 0; r < 32; ++r) {
        double *a = big + (long)r * len;
#pragma omp target teams distribute parallel for map(tofrom : a[0:len]) nowait
        for (long j = 0; j < len; ++j) a[j] = a[j] * 0.5 + 1.0;
      }
#pragma omp taskwait
    }
  }
}

/* kernel1s: a blocking region whose kernel runs one second on the device, one thread spinning on
   the device's clock (omp_get_wtime; on the host device it spins a CPU): what waiting for a long
   kernel costs the host, in cpu_us. The warm-up's regions spin 10 ms. */
static void kernel1s(long n) {
  double secs = warming ? 0.01 : 1.0;
  for (long i = 0; i < n; ++i) {
#pragma omp target firstprivate(secs)
    {
      double t0 = omp_get_wtime();
      while (omp_get_wtime() - t0 < secs) {
      }
    }
  }
}

/* beside_nowait4MiB (only when named): host work beside GPU work. A fixed CPU-bound loop on all
   cores (`parallel` + `for schedule(static)`, a dependent multiply-add chain of 1000 steps per
   iteration, no memory traffic; ~90 ms on the H200 machines' 16 vCPUs at scale 1) is timed alone,
   then with `target nowait` regions in flight beside it, each `map(tofrom: 4 MiB)` of its own
   array and a short kernel. Thread 0 of the loop's team feeds them: a window of BESIDE_WINDOW
   regions issued before its first iteration, refilled every 64 iterations and, once its own share
   is done, until every thread is done; then it waits for them (taskwait, not timed). So the GPU
   work overlaps the whole loop; the loop ends when its last thread is done. The regions use
   BESIDE_SLOTS arrays in turn (`depend(inout)` orders those sharing one) and each kernel writes
   its sequence number into its array's first element, so the host sees a region complete once
   its copy home has landed: `regions_during` counts those completed while the loop ran. Alone
   and beside alternate, one warm-up of each first; prints `beside=beside_nowait4MiB alone_ms=X
   beside_ms=Y slowdown_pct=Z regions_during=N ...`: medians over reps, the slowdown the median of
   each repetition's beside/alone. The feeding code runs in both (a branch per iteration).
   beside_fixed4MiB (only when named): the same loop beside a fixed amount of GPU work, so that
   both runtimes do the same: thread 0 issues BESIDE_FIXED regions (no more), one every
   1/BESIDE_FIXED of its share of the iterations, without looking at which completed. The window
   above issues as fast as regions complete, so a faster runtime runs more of them beside the loop
   (on the H200 ours 100-350 per loop, LLVM 19 40-110) and takes more of its CPU and memory
   bandwidth: this row compares the runtimes on equal work.
   -DBESIDE_SERIAL_KERNEL makes the kernel a plain `target` loop, for checks on the host device:
   there LLVM 19's libomp aborts now and then (kmp_tasking.cpp: task_team != NULL) when the
   host kernels fork their teams and threads inside its hidden helper threads. */
#define BESIDE_SLOTS 64
#define BESIDE_WINDOW 32
#define BESIDE_WORK 1000000L
#define BESIDE_FIXED 32
static double *beside_a;
static long beside_issued, beside_oldest; /* thread 0 of the loop's team only */

static double beside_marker(long slot) {
  return *(volatile double *)&beside_a[slot * (4 * MiB / (long)sizeof(double))];
}

/* How many regions have completed: slot s holds 1 + the sequence number of the last region on it
   whose copy home landed (0: none), and regions s, s + SLOTS, ... use slot s in turn. */
static long beside_completed(void) {
  long done = 0;
  for (long s = 0; s < BESIDE_SLOTS; ++s) {
    long m = (long)beside_marker(s);
    if (m > s) done += (m - 1 - s) / BESIDE_SLOTS + 1;
  }
  return done;
}

/* Issues the next region (its sequence number beside_issued) and counts it. */
static void beside_issue(void) {
  long len = 4 * MiB / (long)sizeof(double);
  double *a = beside_a + (beside_issued % BESIDE_SLOTS) * len;
  double mark = (double)(beside_issued + 1);
#ifdef BESIDE_SERIAL_KERNEL
#pragma omp target map(tofrom : a[0:len]) depend(inout : a[0]) nowait
#else
#pragma omp target teams distribute parallel for map(tofrom : a[0:len]) depend(inout : a[0]) nowait
#endif
  for (long j = 0; j < len; ++j) a[j] = j == 0 ? mark : a[j] * 0.5 + 1.0;
  ++beside_issued;
}

/* Thread 0's feeding at its iteration `i` (negative before and after its share): at the start,
   every 64 iterations and after its share, regions until BESIDE_WINDOW are not yet home (oldest
   first); with a fixed amount of work (beside_fixed) only what is due: the first region at the
   start, one at every `beside_every`-th later iteration, the rest after its share, at most
   BESIDE_FIXED in all. */
static int beside_fixed;
static long beside_every;
static void beside_feed(long i) {
  if (beside_fixed) {
    if (beside_issued < BESIDE_FIXED && (i < 0 || (i > 0 && i % beside_every == 0))) beside_issue();
    return;
  }
  if (i > 0 && (i & 63) != 0) return;
  while (beside_oldest < beside_issued &&
         beside_marker(beside_oldest % BESIDE_SLOTS) >= (double)(beside_oldest + 1))
    ++beside_oldest;
  while (beside_issued - beside_oldest < BESIDE_WINDOW) beside_issue();
}

/* The host loop over n iterations, with the regions beside it when `feed`: its time in s (until
   its last thread is done) and, in *during, the regions completed meanwhile. */
static unsigned long long beside_sink;
static double beside_loop(long n, int feed, long *during) {
  int finished = 0;
  long c0 = 0, c1 = 0;
  double t0 = omp_get_wtime(), end = t0;
  unsigned long long acc = 0;
  if (feed) {
    for (long s = 0; s < BESIDE_SLOTS; ++s) beside_a[s * (4 * MiB / (long)sizeof(double))] = 0;
    beside_issued = beside_oldest = 0;
  }
#pragma omp parallel reduction(^ : acc)
  {
    int feeder = feed && omp_get_thread_num() == 0, nth = omp_get_num_threads();
    if (feeder) {
      c0 = beside_completed();
      /* thread 0's share of the static schedule, in BESIDE_FIXED parts */
      beside_every = n / nth / BESIDE_FIXED > 0 ? n / nth / BESIDE_FIXED : 1;
      beside_feed(-1);
    }
#pragma omp for schedule(static) nowait
    for (long i = 0; i < n; ++i) {
      if (feeder) beside_feed(i);
      unsigned long long x = (unsigned long long)i;
      for (int k = 0; k < 1000; ++k) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
      }
      acc ^= x;
    }
    int done;
#pragma omp atomic capture
    done = ++finished;
    if (done == nth) { /* the last thread: the loop's end */
      end = omp_get_wtime();
      if (feed) c1 = beside_completed();
    }
    if (feeder) {
      struct timespec pause = {0, 20000};
      for (;;) {
        int all;
#pragma omp atomic read
        all = finished;
        if (all == nth) break;
        beside_feed(-1);
        nanosleep(&pause, NULL);
      }
#pragma omp taskwait
    }
  }
  beside_sink ^= acc;
  if (during) *during = c1 - c0;
  return end - t0;
}

static void beside_report(const char *name, int fixed) {
  long n = BESIDE_WORK / scale > 0 ? BESIDE_WORK / scale : 1;
  double alone[64], beside[64], slow[64], during[64];
  beside_a = big; /* BESIDE_SLOTS x 4 MiB of the 1 GiB */
  beside_fixed = fixed;
  threads_begin(); /* the threads= line: over the warm-up and every loop, alone and beside */
  for (int r = -1; r < reps; ++r) { /* r = -1: the warm-up of both */
    long d = 0;
    double a = beside_loop(n, 0, NULL), b = beside_loop(n, 1, &d);
    if (r < 0) continue;
    alone[r] = a * 1e3, beside[r] = b * 1e3, slow[r] = (b / a - 1) * 100, during[r] = (double)d;
  }
  double *v[] = {alone, beside, slow, during};
  for (int i = 0; i < 4; ++i) qsort(v[i], (size_t)reps, sizeof(double), cmp);
  printf("beside=%s alone_ms=%.3f beside_ms=%.3f slowdown_pct=%.2f regions_during=%.0f "
         "min_alone_ms=%.3f min_beside_ms=%.3f min_regions_during=%.0f reps=%d iters=%ld threads=%d\n",
         name, alone[reps / 2], beside[reps / 2], slow[reps / 2], during[reps / 2], alone[0], beside[0], during[0],
         reps, n, omp_get_max_threads());
  fflush(stdout);
  threads_print();
}

/* idle_alloc64MiB (only when named): the first region after an idle pause, as a program that
   offloads now and then sees it. Per repetition the host sleeps 1.5 s (past the CUDA memory
   pool's idle trim, docs/GPU.md) and times one alloc64MiB_kernel region, then the next one
   right after it. Prints `scenario=idle_alloc64MiB median_us=X min_us=Y max_us=Z next_us=W
   start_us=S reps=N`: the medians over reps of the first region and of the next, and the
   process's first such region (right after an empty region has initialised the device). Run it
   first in its process for start_us to mean that. */
static void idle_report(void) {
  double first[64], next[64];
#pragma omp target
  {
  }
  double s0 = omp_get_wtime();
  alloc64m(1); /* also the warm-up */
  double start = (omp_get_wtime() - s0) * 1e6;
  for (int r = 0; r < reps; ++r) {
    struct timespec pause = {1, 500000000};
    while (nanosleep(&pause, &pause) < 0 && errno == EINTR) {
    }
    double t0 = omp_get_wtime();
    alloc64m(1);
    double t1 = omp_get_wtime();
    alloc64m(1);
    first[r] = (t1 - t0) * 1e6, next[r] = (omp_get_wtime() - t1) * 1e6;
  }
  qsort(first, (size_t)reps, sizeof(double), cmp);
  qsort(next, (size_t)reps, sizeof(double), cmp);
  printf("scenario=idle_alloc64MiB median_us=%.3f min_us=%.3f max_us=%.3f next_us=%.3f start_us=%.3f reps=%d "
         "iters=1\n",
         first[reps / 2], first[0], first[reps - 1], next[reps / 2], start, reps);
  fflush(stdout);
}

/* host_memlat (only when named): the host's memory latency in this process, in us per
   dependent load (x1000 = ns), a pointer chase over 512 MiB in a random cycle of 64-byte lines
   (Sattolo's shuffle, a fixed seed). The GPU machines put processes on two latency levels
   (docs/PERFORMANCE.md, "Why the latency rows vary"); named before the latency scenarios in one process,
   it shows whether a slow process's host memory is slow too. */
static size_t *chase;
static size_t chase_at;
static void host_memlat(long n) {
  const size_t lines = 512 * MiB / 64, step = 64 / sizeof(size_t);
  if (!chase) {
    chase = malloc(lines * 64);
    if (!chase) exit(1);
    for (size_t i = 0; i < lines; ++i) chase[i * step] = i;
    unsigned long long x = 88172645463325252ULL;
    for (size_t i = lines - 1; i > 0; --i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      size_t j = (size_t)(x % i), t = chase[i * step];
      chase[i * step] = chase[j * step], chase[j * step] = t;
    }
  }
  size_t at = chase_at;
  for (long i = 0; i < n; ++i) at = chase[at * step];
  chase_at = at;
}

/* host_clock (only when named): the speed of the CPU this process runs on, in ns per step of
   a dependent 64-bit multiply-add chain (1000 steps per iteration; no memory touched). On the
   GPU machines' VMs it varies from process to process, and the latency rows follow it
   (docs/PERFORMANCE.md, "Why the latency rows vary"): `gpu/run.sh perf` runs it first in every process. */
static unsigned long long clock_x = 1;
static void host_clock(long n) {
  unsigned long long x = clock_x;
  for (long i = 0; i < n * 1000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    __asm__ volatile("" : "+r"(x));
  }
  clock_x = x;
}

/* Whether `name` is one of the comma-separated names in `which`, or `which` names "all" (the
   probes that start with "host_" and the beside_ and idle_ rows only when named:
   "host_clock,all"). */
static int chosen(const char *which, const char *name) {
  size_t n = strlen(name);
  for (const char *p = which; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && !strncmp(p, name, n)) return 1;
    if (len == 3 && !strncmp(p, "all", 3) && strncmp(name, "host_", 5) != 0 &&
        strncmp(name, "beside_", 7) != 0 && strncmp(name, "idle_", 5) != 0)
      return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *which = argc > 1 ? argv[1] : "all";
  counters_open();
  barrier_open();
  if (argc > 2 && atoi(argv[2]) > 0) reps = atoi(argv[2]) < 64 ? atoi(argv[2]) : 63;
  if (argc > 3 && atoi(argv[3]) > 0) scale = atoi(argv[3]);
  size_t bytes = 1024 * MiB;
  big = malloc(bytes);
  if (!big) return 1;
  memset(big, 0, bytes);
  /* per: regions per iteration (the per-region time is aggregate over threads and tasks) */
  struct { const char *name; fn_t f; long iters; int per; } s[] = {
      {"host_clock", host_clock, 10000, 1},
      {"host_memlat", host_memlat, 1000000, 1},
      {"empty", empty, 10000, 1},
      {"map64B", map64, 10000, 1},
      {"alloc64MiB_kernel", alloc64m, 200, 1},
      {"alloc1GiB_kernel", alloc1g, 20, 1},
      {"enter_kernel_exit64MiB", enter_exit64m, 200, 1},
      {"threads8_alloc64MiB", threads8_alloc64m, 25, 8},
      {"tofrom64MiB_pageable", tofrom64m, 20, 1},
      {"arrays16x1KiB", arrays16, 1000, 1},
      {"nowait32x4MiB", nowait32_4m, 5, 32},
      /* one region of a second per repetition (at most 3 repetitions: report()) */
      {"kernel1s", kernel1s, 1, 1},
      /* 16000 regions per repetition at every thread count: the 16/32/64/128 curve */
      {"threads16_map64B", threads16_map64, 1000, 16},
      {"threads32_map64B", threads32_map64, 500, 32},
      {"threads64_map64B", threads64_map64, 250, 64},
      {"threads128_map64B", threads128_map64, 125, 128},
  };
  int ran = 0;
  for (size_t i = 0; i < sizeof s / sizeof s[0]; ++i) {
    if (chosen(which, s[i].name)) {
      report(s[i].name, s[i].f, s[i].iters, s[i].per);
      ran = 1;
    }
  }
  if (chosen(which, "beside_nowait4MiB")) {
    beside_report("beside_nowait4MiB", 0);
    ran = 1;
  }
  if (chosen(which, "beside_fixed4MiB")) {
    beside_report("beside_fixed4MiB", 1);
    ran = 1;
  }
  if (chosen(which, "idle_alloc64MiB")) {
    idle_report();
    ran = 1;
  }
  free(big);
  return ran ? 0 : 2;
}
