// malloc inside target regions, differential: which sizes a region's `malloc` gets, from one
// thread and from many, with the device's heap as the runtime leaves it (on a GPU the driver's
// `malloc` heap, whose size the runtime sets only under LIBOMPTARGET_HEAP_SIZE, as LLVM 19;
// on the host device the process's heap). A runtime that sized the heap otherwise would turn a
// program's working allocation into NULL, or a failing one into a working one. Each block is
// written end to end and read back before it is freed.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define KiB 1024L
#define MiB (1024L * KiB)

int main(void) {
  const long sizes[] = {64, 4 * KiB, 1 * MiB, 4 * MiB, 6 * MiB, 7 * MiB, 9 * MiB, 64 * MiB};
  enum { K = sizeof sizes / sizeof *sizes };
  int got[K], good[K];
#pragma omp target map(to : sizes) map(from : got, good)
  for (int k = 0; k < K; k++) {
    char *p = (char *)malloc(sizes[k]);
    got[k] = p != NULL;
    good[k] = 0;
    if (p) {
      for (long i = 0; i < sizes[k]; i += 4096) p[i] = (char)(i / 4096 + k);
      p[sizes[k] - 1] = 7;
      int ok = p[sizes[k] - 1] == 7;
      for (long i = 0; i < sizes[k]; i += 4096) ok &= p[i] == (char)(i / 4096 + k);
      good[k] = ok;
      free(p);
    }
  }
  for (int k = 0; k < K; k++)
    printf("one thread, %8ld bytes: %s%s\n", sizes[k], got[k] ? "allocated" : "NULL",
           got[k] ? (good[k] ? ", written and read back" : ", CONTENT WRONG") : "");

  // Up to 4 teams of 64 threads each take 16 KiB at once (4 MiB together), then 64 KiB each
  // (16 MiB together: more than a GPU's default heap), all blocks held until a barrier: how
  // many of the threads that ran got a block.
  const long each[] = {16 * KiB, 64 * KiB};
  for (int e = 0; e < 2; e++) {
    int n = 0, ran = 0, bad = 0;
    long sz = each[e];
#pragma omp target teams num_teams(4) thread_limit(64) map(tofrom : n, ran, bad)
    {
      int tn = 0, tr = 0, tb = 0;
#pragma omp parallel num_threads(64) reduction(+ : tn, tr, tb)
      {
        int t = omp_get_thread_num();
        int *p = (int *)malloc(sz);
        tr++;
        if (p) {
          tn++;
          for (long i = 0; i < sz / (long)sizeof(int); i += 256) p[i] = t;
          for (long i = 0; i < sz / (long)sizeof(int); i += 256) tb += p[i] != t;
        }
#pragma omp barrier
        free(p);
      }
#pragma omp atomic
      n += tn;
#pragma omp atomic
      ran += tr;
#pragma omp atomic
      bad += tb;
    }
    printf("threads holding %ld bytes each: %s, %d wrong\n", sz,
           n == ran ? "all allocated" : (n == 0 ? "none allocated" : "some allocated"), bad);
  }
  return 0;
}
