// STATUS: signal 6
// STDERR
// target update with the present motion modifier (OpenMP 5.2 §5.9):
// fine on mapped data (including sections and struct members), a runtime
// error on data that is not mapped (both runtimes abort).
#include <omp.h>
#include <stdio.h>

struct S {
  int x;
  int y[4];
};

int main(void) {
  int a[6] = {1, 2, 3, 4, 5, 6};
  struct S s = {7, {8, 9, 10, 11}};
  int unmapped[2] = {0, 0};

#pragma omp target enter data map(to : a, s)
  a[2] = 30;
  s.y[1] = 90;
#pragma omp target update to(present : a[2:1], s.y[1:1])
  int got = 0;
#pragma omp target map(from : got)
  { got = a[2] + s.y[1]; a[5] = 60; s.x = 70; }
  printf("update to(present) on mapped: device a[2]+s.y[1]=%d\n", got);
#pragma omp target update from(present : a, s.x)
  printf("update from(present) on mapped: a[5]=%d s.x=%d\n", a[5], s.x);
#pragma omp target exit data map(release : a, s)
  printf("about to update unmapped with present\n");
  fflush(stdout);
#pragma omp target update to(present : unmapped)
  printf("unreachable %d\n", unmapped[0]);
  return 0;
}
