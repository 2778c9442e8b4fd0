// num_teams / thread_limit clauses. Only deterministic facts are printed:
// bounds hold, every iteration is executed exactly once, and a single
// team with a single thread reports team 0 / thread 0.
#include <omp.h>
#include <stdio.h>

#define N 1000

int main(void) {
  int errors = 0;
  int nteams = -1, nthreads = -1, tnum = -1, thnum = -1;
#pragma omp target teams num_teams(1) thread_limit(1) map(from : nteams, nthreads, tnum, thnum)
  {
    nteams = omp_get_num_teams();
    tnum = omp_get_team_num();
#pragma omp parallel
    {
      nthreads = omp_get_num_threads();
      thnum = omp_get_thread_num();
    }
  }
  printf("num_teams(1) thread_limit(1): teams=%d team=%d threads=%d thread=%d\n", nteams, tnum,
         nthreads, thnum);
  if (nteams != 1 || tnum != 0 || nthreads != 1 || thnum != 0) errors++;

  int got_teams = 0, bad = 0;
#pragma omp target teams num_teams(2) thread_limit(1) map(tofrom : got_teams, bad)
  {
    if (omp_get_team_num() == 0) got_teams = omp_get_num_teams();
    if (omp_get_team_num() >= omp_get_num_teams()) {
#pragma omp atomic
      bad++;
    }
#pragma omp parallel
    {
      if (omp_get_num_threads() > 1) {
#pragma omp atomic
        bad++;
      }
    }
  }
  printf("num_teams(2): 1 <= teams <= 2: %d, bounds violations: %d\n",
         got_teams >= 1 && got_teams <= 2, bad);
  if (!(got_teams >= 1 && got_teams <= 2) || bad) errors++;

  /* every iteration executed once under several team/thread shapes */
  static int count[N];
  int shapes[3][2] = {{1, 1}, {1, 2}, {2, 1}};
  for (int s = 0; s < 3; ++s) {
    for (int i = 0; i < N; ++i) count[i] = 0;
    int nt = shapes[s][0], tl = shapes[s][1];
#pragma omp target teams distribute parallel for num_teams(nt) thread_limit(tl) map(tofrom : count)
    for (int i = 0; i < N; ++i) count[i] += 1;
    int ok = 1;
    for (int i = 0; i < N; ++i)
      if (count[i] != 1) ok = 0;
    printf("num_teams(%d) thread_limit(%d): each iteration once: %s\n", nt, tl, ok ? "yes" : "no");
    if (!ok) errors++;
  }

  /* distribute with dist_schedule: iteration blocks per team, sum check */
  long sum = 0;
#pragma omp target teams distribute num_teams(2) dist_schedule(static, 10) reduction(+ : sum)
  for (int i = 0; i < N; ++i) sum += i;
  printf("distribute sum=%ld\n", sum);
  if (sum != 499500) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
