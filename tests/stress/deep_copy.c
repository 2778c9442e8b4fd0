// A deep copy of N structs, each with a pointer member attached to its own data, in one
// mapped array: by hand (`a[0:N]`, then `a[i].p[0:M]` for every i) or through a `declare
// mapper`. Each attach, each copy into the array and each copy back must find the array's
// attached pointers in O(log N), and an exit restore only the pointers its copy overwrote:
// linear searches and restores made this O(N^2) in time and memory (N = 20,000 through the
// mapper: 6.3 GB at the exit).
//
// usage: deep_copy manual|mapper N [enter]
// prints: MODE N enter SECONDS exit SECONDS maxrss KIB bad COUNT
// With `enter`, only the enter is timed and the program ends right after it (`_Exit`): LLVM
// 19's exit of such an array is quadratic (minutes at N = 100,000), its enter is not.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define M 4

typedef struct {
  int n;
  double *p;
} S;

#pragma omp declare mapper(S s) map(s, s.p[0:s.n])

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int mapper = argc > 1 && !strcmp(argv[1], "mapper");
  int n = argc > 2 ? atoi(argv[2]) : 1000;
  S *a = malloc(sizeof(S) * n);
  for (int i = 0; i < n; i++) {
    a[i].n = M;
    a[i].p = malloc(sizeof(double) * M);
    for (int j = 0; j < M; j++) a[i].p[j] = j;
  }
  double t0 = now();
  if (mapper) {
#pragma omp target enter data map(to : a[0:n])
  } else {
#pragma omp target enter data map(to : a[0:n])
    for (int i = 0; i < n; i++) {
#pragma omp target enter data map(to : a[i].p[0:M])
    }
  }
  double t1 = now();
  if (argc > 3 && !strcmp(argv[3], "enter")) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%s %d enter %.4f maxrss %ld\n", mapper ? "mapper" : "manual", n, t1 - t0,
           ru.ru_maxrss);
    fflush(stdout);
    _Exit(0);
  }
#pragma omp target teams distribute parallel for
  for (int i = 0; i < n; i++)
    for (int j = 0; j < M; j++) a[i].p[j] += i;
  double t2 = now();
  if (mapper) {
#pragma omp target exit data map(from : a[0:n])
  } else {
    for (int i = 0; i < n; i++) {
#pragma omp target exit data map(from : a[i].p[0:M])
    }
#pragma omp target exit data map(from : a[0:n])
  }
  double t3 = now();
  long bad = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < M; j++)
      if (a[i].p[j] != j + i) bad++;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("%s %d enter %.4f exit %.4f maxrss %ld bad %ld\n", mapper ? "mapper" : "manual", n,
         t1 - t0, t3 - t2, ru.ru_maxrss, bad);
  return bad != 0;
}
