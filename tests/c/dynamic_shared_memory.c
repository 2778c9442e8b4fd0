// ENV: LIBOMPTARGET_SHARED_MEMORY_SIZE=1024
// LIBOMPTARGET_SHARED_MEMORY_SIZE gives every GPU kernel launch that many bytes of dynamic
// shared memory, which the device runtime hands out through
// llvm_omp_target_dynamic_shared_alloc(): each team fills its block and reads it back after a
// barrier. On the host device the call returns NULL (under LLVM's runtime and ours).
#include <omp.h>
#include <stdio.h>

int main(void) {
  enum { TEAMS = 40, THREADS = 64, WORDS = 256 };
  int nonnull = 0, wrong = 0;
#pragma omp target teams num_teams(TEAMS) thread_limit(THREADS) map(tofrom : nonnull, wrong)
  {
    int *buf = (int *)llvm_omp_target_dynamic_shared_alloc();
    if (buf) {
#pragma omp atomic
      nonnull += 1;
    }
#pragma omp parallel num_threads(THREADS)
    {
      int t = omp_get_thread_num(), team = omp_get_team_num();
      if (buf)
        for (int i = t; i < WORDS; i += omp_get_num_threads())
          buf[i] = team * WORDS + i;
#pragma omp barrier
      if (buf)
        for (int i = t; i < WORDS; i += omp_get_num_threads())
          if (buf[i] != team * WORDS + i) {
#pragma omp atomic
            wrong += 1;
          }
    }
  }
  printf("teams with dynamic shared memory: %d, wrong words: %d\n", nonnull, wrong);
  return 0;
}
