// GPU-TIMEOUT-S: 300 (hundreds of launches, up to 2^31 - 1 teams, while other programs share the GPU)
// The CUDA-style pattern of many GPU applications: one team per tile of T elements
// (num_teams(N), N = ceil(n / T) up to 10^6), a team-local tile, a parallel region indexed by
// omp_get_team_num() and omp_get_thread_num(), a barrier, then each thread reads a neighbour's
// element of the tile. Every element of the result is checked. On a GPU every team asked for
// must run (LLVM 19 launches up to the grid's limit); on the host device libomp forms fewer
// teams than asked, and the program says so (the same under both runtimes).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define T 128

#include "on_gpu.h"

static void tile_case(long nteams) {
  long n = nteams * T - 3; // the last tile is not full
  float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
  for (long i = 0; i < n; i++) {
    in[i] = (float)(i % 1000);
    out[i] = -1.0f;
  }
  int seen_teams = 0, seen_threads = 0;
#pragma omp target teams num_teams(nteams) thread_limit(T) map(to : in[0:n])                   \
    map(tofrom : out[0:n]) map(tofrom : seen_teams, seen_threads)
  {
    float tile[T];
    if (omp_get_team_num() == 0) seen_teams = omp_get_num_teams();
#pragma omp parallel num_threads(T)
    {
      int t = omp_get_thread_num();
      long b = omp_get_team_num();
      long i = b * T + t;
      if (b == 0 && t == 0) seen_threads = omp_get_num_threads();
      tile[t] = i < n ? in[i] : 0.0f;
#pragma omp barrier
      if (i < n) out[i] = tile[t] + 2.0f * tile[(t + 1) % T];
    }
  }
  long wrong = 0, first = -1;
  for (long i = 0; i < n; i++) {
    long b = i / T, t = i % T, j = b * T + (t + 1) % T;
    float want = in[i] + 2.0f * (j < n ? in[j] : 0.0f);
    if (out[i] != want) {
      if (first < 0) first = i;
      wrong++;
    }
  }
  printf("num_teams(%ld) thread_limit(%d): omp_get_num_teams=%d omp_get_num_threads=%d "
         "elements=%ld wrong=%ld first_wrong=%ld\n",
         nteams, T, seen_teams, seen_threads, n, wrong, first);
  free(in);
  free(out);
}

// Reductions across more teams than 65,536: a team-level reduction and a combined loop.
static void reduction_case(long nteams) {
  unsigned long long s = 0, want = 0;
#pragma omp target teams num_teams(nteams) reduction(+ : s)
  s += (unsigned long long)omp_get_team_num() + 1;
  int nt = 0;
#pragma omp target teams num_teams(nteams) map(tofrom : nt)
  if (omp_get_team_num() == 0) nt = omp_get_num_teams();
  want = (unsigned long long)nt * (nt + 1) / 2;
  long n = nteams * 256;
  double sum = 0;
#pragma omp target teams distribute parallel for num_teams(nteams) reduction(+ : sum)
  for (long i = 0; i < n; i++)
    sum += (double)(i % 7);
  double want_sum = 0;
  for (long i = 0; i < n; i++)
    want_sum += (double)(i % 7);
  printf("num_teams(%ld) reduction: teams=%d team_sum %s, loop of %ld sum %s\n", nteams, nt,
         s == want ? "right" : "WRONG", n, sum == want_sum ? "right" : "WRONG");
}

int main(void) {
  int gpu = default_device_is_gpu();
  static const long gpu_teams[] = {1000, 65535, 65536, 65537, 131072, 200000, 1000000};
  static const long host_teams[] = {1, 2, 3};
  const long *teams = gpu ? gpu_teams : host_teams;
  int k = gpu ? 7 : 3;
  for (int i = 0; i < k; i++)
    tile_case(teams[i]);
  for (int i = 0; i < k; i++)
    reduction_case(teams[i]);
  return 0;
}
