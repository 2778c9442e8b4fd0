// STATUS: signal 6
// STDERR
// Partially overlapping section on target enter data (a[2:4] mapped, then
// a[0:4] requested): also an illegal extension, reported by enter data.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int a[8] = {0};
#pragma omp target enter data map(to : a[2:4])
  printf("about to enter a[0:4] overlapping a[2:4]\n");
  fflush(stdout);
#pragma omp target enter data map(to : a[0:4])
  printf("unreachable\n");
  return 0;
}
