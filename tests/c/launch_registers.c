// A kernel whose registers allow fewer threads per block than its thread_limit asks (a
// run-time value, so clang emits no launch bound and ptxas does not cap the registers).
// Non-bare: LLVM 19 launches as many threads as the function allows
// (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) and the program sees that count. Bare
// (`ompx_bare`, last): the clause is launched as it is, so on a GPU the launch fails with the
// driver's "too many resources requested for launch" and the offload policy ends the program,
// under LLVM 19 and ours alike: a CUDA-style kernel indexes by the block size it asked for,
// and running it with fewer threads would skip work silently.
// STATUS(gpu): signal 6 (the bare launch, as above)
#include <omp.h>
#include <ompx.h>
#include <stdio.h>

#define ACC 96

#pragma omp declare target
double in[ACC * 2];
static double heavy(int t, int n) {
  double acc[ACC];
#pragma unroll
  for (int k = 0; k < ACC; k++)
    acc[k] = in[k] * t;
  for (int r = 0; r < n; r++) {
#pragma unroll
    for (int k = 0; k < ACC; k++)
      acc[k] = acc[k] * in[(k + r) % ACC] + in[ACC + k];
  }
  double s = 0;
#pragma unroll
  for (int k = 0; k < ACC; k++)
    s += acc[k];
  return s;
}
#pragma omp end declare target

int main(void) {
  for (int k = 0; k < 2 * ACC; k++)
    in[k] = 1.0 / (k + 3);
#pragma omp target update to(in)
  int tl = 1024, n = 3, nthreads = 0, ran = 0;
  double sum = 0;
#pragma omp target teams num_teams(1) thread_limit(tl) map(tofrom : nthreads, ran, sum)
#pragma omp parallel reduction(+ : ran, sum)
  {
    if (omp_get_thread_num() == 0) nthreads = omp_get_num_threads();
    ran += 1;
    sum += heavy(omp_get_thread_num(), n);
  }
  printf("thread_limit(%d): omp_get_num_threads=%d ran=%d fewer_than_asked=%d\n", tl, nthreads,
         ran, nthreads < tl);
  fflush(stdout);
  int bare_ran = 0;
#pragma omp target teams ompx_bare num_teams(1) thread_limit(tl) map(tofrom : bare_ran, sum)
  {
    double s = heavy(ompx_thread_id_x(), n);
#pragma omp atomic
    bare_ran += 1;
    if (s == -1.0) sum = s;
  }
  printf("bare thread_limit(%d): threads that ran=%d\n", tl, bare_ran);
  return 0;
}
