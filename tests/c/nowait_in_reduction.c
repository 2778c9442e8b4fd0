// LATE-COPIES: with copies back landing late, two tasks' regions at one moment on the one device copy libomp lets them share lose a part in about 1 run of 300 (not the runtime's to fix); crates/abi/tests/held_host.rs runs it under late copies with that tolerance
// Target task reductions (OpenMP 5.2 §5.5.10, §5.5.11): `target in_reduction` inside a
// taskgroup with task_reduction, blocking and nowait, and inside a parallel region with a
// task reduction modifier; the reduction variable is the task's private copy, mapped
// tofrom by the construct, beside an ordinary mapped array.
#include <omp.h>
#include <stdio.h>

#define N 64

int main(void) {
  int errors = 0;
  int sum = 0;
  long a[N];
  for (int i = 0; i < N; ++i) a[i] = i;
#pragma omp parallel num_threads(4)
#pragma omp single
  {
#pragma omp taskgroup task_reduction(+ : sum)
    {
      for (int k = 1; k <= 4; k++) {
#pragma omp target in_reduction(+ : sum) map(to : a[0:N])
        for (int i = 0; i < N; ++i) sum += (int)a[i] * k;
      }
      for (int k = 1; k <= 8; k++) {
#pragma omp target in_reduction(+ : sum) nowait
        sum += 1000 * k;
      }
    }
  }
  int want = 2016 * (1 + 2 + 3 + 4) + 1000 * 36;
  printf("taskgroup task_reduction: sum=%d (want %d)\n", sum, want);
  errors += sum != want;

  int s2 = 0;
#pragma omp parallel reduction(task, + : s2) num_threads(3)
  {
#pragma omp single
    for (int i = 0; i < 5; i++) {
#pragma omp target in_reduction(+ : s2) nowait
      s2 += 10;
    }
  }
  printf("parallel reduction(task): s2=%d (want 50)\n", s2);
  errors += s2 != 50;
  printf("%s\n", errors ? "FAIL" : "PASS");
  return errors != 0;
}
