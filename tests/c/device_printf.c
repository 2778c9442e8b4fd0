// printf inside target regions, differential: where a region's output appears among the
// host's lines. On a GPU the driver writes what kernels print only at synchronising calls (a
// stream or event synchronisation, a launch, a module unload; not a query, and not at process
// exit): LLVM 19 ends each region with a stream synchronisation, so a region's lines come
// before the host's next ones; a runtime that found the work complete by polling alone would
// leave them for a later call, out of order, or lose the last region's. Each host line is
// flushed at once, so the order in the output is the order of writing. One thread prints in
// each region (the order between teams is the device's), blocking, `nowait` with a taskwait,
// and in the last region before the program ends. No host line follows the taskwait: LLVM 19
// polls a `nowait` region's stream (`cuStreamQuery`) before it synchronises it, so its
// output may wait for the next launch there (ours synchronises a printing image's stream
// once the query finds it complete).
#include <omp.h>
#include <stdio.h>

static void host(const char *what) {
  printf("host: %s\n", what);
  fflush(stdout);
}

int main(void) {
  int x = 5;
  host("before the first region");
#pragma omp target map(tofrom : x)
  {
    printf("device: first region, x=%d\n", x);
    x += 1;
  }
  host("after the first region");
#pragma omp target teams num_teams(4) thread_limit(32) map(tofrom : x)
  {
#pragma omp parallel
    if (omp_get_team_num() == 0 && omp_get_thread_num() == 0)
      printf("device: team 0 thread 0 of a teams region, x=%d\n", x);
  }
  host("after the teams region");
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp target map(to : x) nowait
    printf("device: a nowait region, x=%d\n", x);
#pragma omp taskwait
  }
  for (int i = 0; i < 3; i++) {
#pragma omp target map(to : i)
    printf("device: loop region %d\n", i);
    printf("host: after loop region %d\n", i);
    fflush(stdout);
  }
  host("before the last region");
#pragma omp target map(to : x)
  printf("device: the last region, x=%d\n", x);
  return 0;
}
