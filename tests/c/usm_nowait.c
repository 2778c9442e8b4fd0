// GPU-UNCOMPARED: unified shared memory on an H200 without HMM/ATS (PAGEABLE_MEMORY_ACCESS 0): ours refuses at registration, LLVM 19 faults (docs/GPU.md)
// `unified_shared_memory` with `nowait` (OpenMP 5.2 §13.8, §8.2.1): deferred target tasks
// chained by dependences work on host data in place; after `taskwait` the host sees every
// update, without any copy back (the first region maps its chunk `to` only).
#include <stdio.h>
#include <stdlib.h>

#pragma omp requires unified_shared_memory

int main(void) {
  enum { N = 256, CHUNKS = 4 };
  int *v = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++)
    v[i] = i;
  int errors = 0;
  for (int c = 0; c < CHUNKS; c++) {
    int *chunk = v + c * (N / CHUNKS);
#pragma omp target nowait map(to : chunk[0 : N / CHUNKS]) depend(inout : chunk[0])
    for (int i = 0; i < N / CHUNKS; i++)
      chunk[i] *= 2;
#pragma omp target nowait depend(inout : chunk[0])
    for (int i = 0; i < N / CHUNKS; i++)
      chunk[i] += 1; // no map at all: the pointer is used as it is
  }
#pragma omp taskwait
  for (int i = 0; i < N; i++)
    if (v[i] != 2 * i + 1)
      errors++;
  printf("v[0]=%d v[100]=%d v[255]=%d\n", v[0], v[100], v[255]);
  free(v);
  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
