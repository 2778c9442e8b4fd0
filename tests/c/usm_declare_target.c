// GPU-UNCOMPARED: unified shared memory on an H200 without HMM/ATS (PAGEABLE_MEMORY_ACCESS 0): ours refuses at registration, LLVM 19 faults (docs/GPU.md)
// `unified_shared_memory` with `declare target` variables (OpenMP 5.2 §7.8.1, §8.2.1):
// clang turns each into a reference to the host variable, which the runtime points at the
// host copy when it loads the image, so host and device share one copy without `target
// update`, for `to` and `link` variables alike.
#include <omp.h>
#include <stdio.h>

#pragma omp requires unified_shared_memory

int counter = 10;
double table[4] = {0.5, 1.5, 2.5, 3.5};
#pragma omp declare target to(counter, table)
int linked[3] = {7, 8, 9};
#pragma omp declare target link(linked)

#pragma omp begin declare target
void bump(void) { counter += 1; }
#pragma omp end declare target

int main(void) {
  int errors = 0;
  double sum = 0;
#pragma omp target map(tofrom : sum)
  {
    bump();
    for (int i = 0; i < 4; i++)
      sum += table[i];
    table[0] = -1;
    linked[1] += 100;
  }
  printf("counter %d sum %.1f table[0] %.1f linked[1] %d\n", counter, sum, table[0],
         linked[1]);
  if (counter != 11 || sum != 8.0 || table[0] != -1 || linked[1] != 108)
    errors++;
  // Host writes reach the device without an update.
  counter = 50;
  linked[2] = 90;
  int seen = 0, seen_link = 0;
#pragma omp target map(from : seen, seen_link)
  {
    seen = counter;
    seen_link = linked[2];
  }
  printf("device sees counter %d linked[2] %d\n", seen, seen_link);
  if (seen != 50 || seen_link != 90)
    errors++;
  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
