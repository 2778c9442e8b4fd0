// Eight `target in_reduction(+ : sum) nowait` tasks in a taskgroup task reduction. libomp
// gives such tasks on its hidden helper threads the shared `sum` itself, so they map one
// host variable at once; run with OMPTARGET_RS_HOST_LATE_COPIES=N (the host device lands
// copies back when their queue is found complete, as the CUDA device does), a task that
// copied `sum` in before another's copy back landed loses that task's part unless the
// runtime completes the held construct first (crates/core/src/ops/held.rs), and a task that
// finds the variable's mapping released by another's construct still running completes that
// construct before mapping it again (ops/data.rs, `after_released`).
// crates/abi/tests/held_host.rs runs it.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int sum = 0;
#pragma omp parallel num_threads(4)
#pragma omp single
  {
#pragma omp taskgroup task_reduction(+ : sum)
    {
      for (int k = 1; k <= 8; k++) {
#pragma omp target in_reduction(+ : sum) nowait
        sum += 1000 * k;
      }
    }
  }
  // Five such tasks in a parallel region's task reduction map one variable too; a task that
  // finds it mapped with no reference left (another task's copy back still to land) must
  // not share that device copy.
  int s2 = 0;
#pragma omp parallel reduction(task, + : s2) num_threads(3)
  {
#pragma omp single
    for (int i = 0; i < 5; i++) {
#pragma omp target in_reduction(+ : s2) nowait
      s2 += 10;
    }
  }
  printf("sum=%d s2=%d\n", sum, s2);
  return sum != 36000 || s2 != 50;
}
