// The launch-geometry suite: kernels of every execution mode, each launched with clause values
// around every limit (1, 31-33, 1024-1025, 65,535-65,537, 2^20 and, on a GPU, 2^31 - 1 teams),
// with and without a trip count, with and without `parallel num_threads(n)` inside. Each
// launch prints one line: what the program saw (omp_get_num_teams, omp_get_num_threads inside
// the parallel region) and what actually ran (how many teams and threads, and a checksum of
// their numbers). The harness runs the same binary under LLVM's runtime and ours, on the host
// device and on the GPU (gpu/verify.sh), and the outputs must agree line for line.
//
// The programs that include this header pick the cases (GEOMETRY_CASES) and the environment
// (`// ENV:`): launch_geometry.c (no variables), launch_geometry_env_*.c (GEOMETRY_ENV_CASES).
//
// A kernel's mode is clang's choice (`LIBOMPTARGET_INFO=16` prints it): `target teams
// distribute parallel for` is SPMD; `target teams` that only computes locals before its
// `parallel` region becomes Generic-SPMD (clang's OpenMP optimisation runs it on every
// thread); `target teams` with side effects before its `parallel` regions stays Generic; `teams distribute` with a nested
// `parallel for` is Generic, launched by its trip count; `ompx_bare` kernels have no kernel
// environment.
#include <omp.h>
#include <ompx.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "on_gpu.h"

#define SLOTS 1024

// Counters, spread over SLOTS slots by team number so that 2^31 teams do not all hit one
// address; the host adds the slots up.
typedef struct {
  unsigned long long teams;       // teams whose first thread recorded
  unsigned long long team_sum;    // sum of their team numbers
  unsigned long long team_sq;     // sum of their squares (mod 2^64): duplicates and gaps show
  unsigned long long threads;     // threads that ran inside the parallel region (or loop)
  unsigned long long thread_sum;  // sum of those threads' numbers
  int nteams_min, nteams_max;     // omp_get_num_teams()
  int nthreads_min, nthreads_max; // omp_get_num_threads() inside the parallel region
  int pad[4];
} slot_t;

#pragma omp declare target
static inline void at_min(int *p, int v) {
#pragma omp atomic compare
  if (v < *p) { *p = v; }
}
static inline void at_max(int *p, int v) {
#pragma omp atomic compare
  if (v > *p) { *p = v; }
}
static inline void record_team(slot_t *S, int team, int nteams) {
  slot_t *s = &S[(unsigned)team % SLOTS];
  unsigned long long t = (unsigned long long)team;
#pragma omp atomic
  s->teams += 1;
#pragma omp atomic
  s->team_sum += t;
#pragma omp atomic
  s->team_sq += t * t;
  at_min(&s->nteams_min, nteams);
  at_max(&s->nteams_max, nteams);
}
static inline void record_thread(slot_t *S, int team, int thread, int nthreads) {
  slot_t *s = &S[(unsigned)team % SLOTS];
#pragma omp atomic
  s->threads += 1;
#pragma omp atomic
  s->thread_sum += (unsigned long long)thread;
  at_min(&s->nthreads_min, nthreads);
  at_max(&s->nthreads_max, nthreads);
}
#pragma omp end declare target

static slot_t *S;

static void reset(void) {
  for (int i = 0; i < SLOTS; i++) {
    memset(&S[i], 0, sizeof S[i]);
    S[i].nteams_min = S[i].nthreads_min = 0x7fffffff;
    S[i].nteams_max = S[i].nthreads_max = -1;
  }
#pragma omp target update to(S[0:SLOTS])
}

#define PRAGMA(x) _Pragma(#x)

// `target teams` recording its team, then a `parallel` region (Generic), four clause variants.
#define TEAMS_PARALLEL(NAME, CLAUSES)                                                          \
  static void NAME(int nt, int tl, int nth) {                                                  \
    (void)nt; (void)tl;                                                                        \
    PRAGMA(omp target teams CLAUSES)                                                           \
    {                                                                                          \
      int team = omp_get_team_num();                                                           \
      record_team(S, team, omp_get_num_teams());                                               \
      if (nth > 0) {                                                                           \
        PRAGMA(omp parallel num_threads(nth))                                                  \
        record_thread(S, team, omp_get_thread_num(), omp_get_num_threads());                  \
      } else {                                                                                 \
        PRAGMA(omp parallel)                                                                   \
        record_thread(S, team, omp_get_thread_num(), omp_get_num_threads());                  \
      }                                                                                        \
    }                                                                                          \
  }
TEAMS_PARALLEL(tp_nt_tl, num_teams(nt) thread_limit(tl))
TEAMS_PARALLEL(tp_nt, num_teams(nt))
TEAMS_PARALLEL(tp_tl, thread_limit(tl))
TEAMS_PARALLEL(tp_none, )

// `target teams` computing its team number, then a `parallel` region: clang emits it Generic
// and its OpenMP optimisation turns it into SPMD (Generic-SPMD, "Transformed generic-mode
// kernel to SPMD-mode"); the team is recorded by its thread 0 inside the region.
#define TEAMS_ONLY_PARALLEL(NAME, CLAUSES, PARALLEL)                                           \
  static void NAME(int nt, int tl, int nth) {                                                  \
    (void)nt; (void)tl; (void)nth;                                                             \
    PRAGMA(omp target teams CLAUSES)                                                           \
    {                                                                                          \
      int team = omp_get_team_num();                                                           \
      int nteams = omp_get_num_teams();                                                        \
      PRAGMA(PARALLEL)                                                                         \
      {                                                                                        \
        if (omp_get_thread_num() == 0) record_team(S, team, nteams);                           \
        record_thread(S, team, omp_get_thread_num(), omp_get_num_threads());                  \
      }                                                                                        \
    }                                                                                          \
  }
TEAMS_ONLY_PARALLEL(gs_nt_tl, num_teams(nt) thread_limit(tl), omp parallel)
TEAMS_ONLY_PARALLEL(gs_nt, num_teams(nt), omp parallel)
TEAMS_ONLY_PARALLEL(gs_tl, thread_limit(tl), omp parallel)
TEAMS_ONLY_PARALLEL(gs_none, , omp parallel)
TEAMS_ONLY_PARALLEL(gsn_nt_tl, num_teams(nt) thread_limit(tl), omp parallel num_threads(nth))
TEAMS_ONLY_PARALLEL(gsn_nt, num_teams(nt), omp parallel num_threads(nth))
TEAMS_ONLY_PARALLEL(gsn_tl, thread_limit(tl), omp parallel num_threads(nth))
TEAMS_ONLY_PARALLEL(gsn_none, , omp parallel num_threads(nth))
// Both forms: without num_threads when nth is 0.
#define GS_PICK(SUFFIX)                                                                        \
  static void gs_any_##SUFFIX(int nt, int tl, int nth) {                                       \
    if (nth > 0) gsn_##SUFFIX(nt, tl, nth); else gs_##SUFFIX(nt, tl, nth);                     \
  }
GS_PICK(nt_tl)
GS_PICK(nt)
GS_PICK(tl)
GS_PICK(none)

// `target teams distribute parallel for` (SPMD) over `trip` iterations: a team counts once
// per iteration its thread 0 runs, a thread once per iteration.
#define SPMD(NAME, CLAUSES)                                                                    \
  static void NAME(int nt, int tl, long trip) {                                                \
    (void)nt; (void)tl;                                                                        \
    PRAGMA(omp target teams distribute parallel for CLAUSES)                                   \
    for (long i = 0; i < trip; i++) {                                                          \
      int team = omp_get_team_num();                                                           \
      if (omp_get_thread_num() == 0) record_team(S, team, omp_get_num_teams());               \
      record_thread(S, team, omp_get_thread_num(), omp_get_num_threads());                    \
    }                                                                                          \
  }
SPMD(spmd_nt_tl, num_teams(nt) thread_limit(tl))
SPMD(spmd_nt, num_teams(nt))
SPMD(spmd_tl, thread_limit(tl))
SPMD(spmd_none, )

// `target teams distribute` with a nested `parallel for` (launched by its trip count).
#define DIST(NAME, CLAUSES)                                                                    \
  static void NAME(int nt, int tl, long trip) {                                                \
    (void)nt; (void)tl;                                                                        \
    PRAGMA(omp target teams distribute CLAUSES)                                                \
    for (long i = 0; i < trip; i++) {                                                          \
      int team = omp_get_team_num();                                                           \
      record_team(S, team, omp_get_num_teams());                                               \
      PRAGMA(omp parallel for)                                                                 \
      for (int j = 0; j < 64; j++)                                                             \
        record_thread(S, team, omp_get_thread_num(), omp_get_num_threads());                  \
    }                                                                                          \
  }
DIST(dist_nt_tl, num_teams(nt) thread_limit(tl))
DIST(dist_none, )

// `ompx_bare`: CUDA-style, both clauses required; every thread records.
static void bare(int nt, int tl) {
#pragma omp target teams ompx_bare num_teams(nt) thread_limit(tl)
  {
    int team = ompx_block_id_x();
    if (ompx_thread_id_x() == 0) record_team(S, team, ompx_grid_dim_x());
    record_thread(S, team, ompx_thread_id_x(), ompx_block_dim_x());
  }
}

static void report(const char *kind, int nt, int tl, int nth, long trip) {
#pragma omp target update from(S[0:SLOTS])
  unsigned long long teams = 0, team_sum = 0, team_sq = 0, threads = 0, thread_sum = 0;
  int ntmin = 0x7fffffff, ntmax = -1, nthmin = 0x7fffffff, nthmax = -1;
  for (int i = 0; i < SLOTS; i++) {
    teams += S[i].teams;
    team_sum += S[i].team_sum;
    team_sq += S[i].team_sq;
    threads += S[i].threads;
    thread_sum += S[i].thread_sum;
    if (S[i].nteams_min < ntmin) ntmin = S[i].nteams_min;
    if (S[i].nteams_max > ntmax) ntmax = S[i].nteams_max;
    if (S[i].nthreads_min < nthmin) nthmin = S[i].nthreads_min;
    if (S[i].nthreads_max > nthmax) nthmax = S[i].nthreads_max;
  }
  // Every team of omp_get_num_teams() ran exactly once (teams that got no iteration of a
  // loop do not record, so for loops this says whether the recorded teams are 0..k-1).
  unsigned long long n = teams;
  int complete = n > 0 && team_sum == n * (n - 1) / 2 &&
                 team_sq == (unsigned long long)((unsigned __int128)n * (n - 1) * (2 * n - 1) / 6);
  char buf[64];
  printf("%-10s", kind);
  if (nt >= 0) printf(" num_teams=%-10d", nt); else printf(" num_teams=%-10s", "-");
  if (tl >= 0) printf(" thread_limit=%-5d", tl); else printf(" thread_limit=%-5s", "-");
  if (nth > 0) printf(" num_threads=%-4d", nth); else printf(" num_threads=%-4s", "-");
  if (trip >= 0) snprintf(buf, sizeof buf, "%ld", trip); else snprintf(buf, sizeof buf, "-");
  printf(" trip=%-8s | omp_get_num_teams=%d", buf, ntmax);
  if (ntmin != ntmax) printf("..%d(differs!)", ntmin);
  printf(" teams_ran=%llu%s omp_get_num_threads=", teams, complete ? " (0..n-1 once)" : " (gaps!)");
  if (nthmax < 0) printf("-"); else if (nthmin == nthmax) printf("%d", nthmax); else printf("%d..%d", nthmin, nthmax);
  printf(" threads_ran=%llu thread_sum=%llu\n", threads, thread_sum);
  fflush(stdout);
}

typedef void (*teams_fn)(int, int, int);
typedef void (*loop_fn)(int, int, long);

// The cases: each value list, the clauses present or not.
static void run_teams(const char *kind, teams_fn both, teams_fn nt_only, teams_fn tl_only,
                      teams_fn none, const int *teams, int nteams, const int *tls, int ntls,
                      const int *nths, int nnths) {
  for (int a = -1; a < nteams; a++)
    for (int b = -1; b < ntls; b++)
      for (int c = 0; c < nnths; c++) {
        int nt = a < 0 ? -1 : teams[a], tl = b < 0 ? -1 : tls[b], nth = nths[c];
        // Keep each launch's thread count bounded: many teams run with small teams.
        if (nt > 70000 && (tl < 0 || tl > 33 || nth > 33)) continue;
        if (nt < 0 && nth > 1 && b >= 0 && tls[b] > 33) continue;
        reset();
        if (nt >= 0 && tl >= 0) both(nt, tl, nth);
        else if (nt >= 0) nt_only(nt, tl, nth);
        else if (tl >= 0) tl_only(nt, tl, nth);
        else none(nt, tl, nth);
        report(kind, nt, tl, nth, -1);
      }
}

static void run_loops(const char *kind, loop_fn both, loop_fn nt_only, loop_fn tl_only,
                      loop_fn none, const int *teams, int nteams, const int *tls, int ntls,
                      const long *trips, int ntrips) {
  for (int a = -1; a < nteams; a++)
    for (int b = -1; b < ntls; b++)
      for (int c = 0; c < ntrips; c++) {
        int nt = a < 0 ? -1 : teams[a], tl = b < 0 ? -1 : tls[b];
        long trip = trips[c];
        if (!nt_only && nt >= 0 && tl < 0) continue;
        if (!tl_only && nt < 0 && tl >= 0) continue;
        reset();
        if (nt >= 0 && tl >= 0) both(nt, tl, trip);
        else if (nt >= 0) nt_only(nt, tl, trip);
        else if (tl >= 0) tl_only(nt, tl, trip);
        else none(nt, tl, trip);
        report(kind, nt, tl, 0, trip);
      }
}

// The cases of the programs that repeat the suite under an environment variable: every mode
// with two num_threads values, bare kernels on every third team count.
#define GEOMETRY_ENV_CASES                                                                     \
  run_teams("generic", tp_nt_tl, tp_nt, tp_tl, tp_none, teams, nteams, tls, ntls, nths, 2);    \
  run_teams("gen-spmd", gs_any_nt_tl, gs_any_nt, gs_any_tl, gs_any_none, teams, nteams, tls,  \
            ntls, nths, 2);                                                                    \
  run_loops("spmd", spmd_nt_tl, spmd_nt, spmd_tl, spmd_none, teams, nteams, tls, ntls, trips, \
            ntrips);                                                                           \
  for (int a = 0; a < nteams; a += 3)                                                          \
    for (int b = 0; b < ntls && tls[b] <= 1024; b += 2) {                                      \
      reset();                                                                                 \
      bare(teams[a], tls[b]);                                                                  \
      report("bare", teams[a], tls[b], 0, -1);                                                 \
    }

static int geometry_main(void) {
  S = (slot_t *)calloc(SLOTS, sizeof(slot_t));
  int gpu = default_device_is_gpu();
#pragma omp target enter data map(alloc : S[0:SLOTS])
  // The host device runs each team as a thread of libomp's: its lists stay small.
  static const int gpu_teams[] = {1, 31, 32, 33, 1024, 1025, 65535, 65536, 65537, 1 << 20};
  static const int host_teams[] = {1, 2, 3};
  static const int gpu_tls[] = {1, 31, 32, 33, 1024, 1025};
  static const int host_tls[] = {1, 2};
  static const int gpu_nths[] = {0, 1, 33, 1024};
  static const int host_nths[] = {0, 1, 3};
  static const long gpu_trips[] = {1, 1000, 100000, 1L << 24};
  static const long host_trips[] = {1, 7, 1000};
  const int *teams = gpu ? gpu_teams : host_teams;
  int nteams = gpu ? 10 : 3;
  const int *tls = gpu ? gpu_tls : host_tls;
  int ntls = gpu ? 6 : 2;
  const int *nths = gpu ? gpu_nths : host_nths;
  int nnths = gpu ? 4 : 3;
  const long *trips = gpu ? gpu_trips : host_trips;
  int ntrips = gpu ? 4 : 3;
  GEOMETRY_CASES
#pragma omp target exit data map(delete : S[0:SLOTS])
  free(S);
  return 0;
}
