// STATUS: signal 6
// STDERR
// A map that extends an existing mapping (a[0:4] entered, a[0:8] mapped
// by a target region) is an error: "explicit extension not allowed".
#include <omp.h>
#include <stdio.h>

int main(void) {
  int a[8] = {0, 1, 2, 3, 4, 5, 6, 7};
#pragma omp target enter data map(to : a[0:4])
  /* contained subsections are fine */
#pragma omp target map(tofrom : a[1:2])
  { a[1] = 10; }
  printf("contained section: ok\n");
  printf("about to map a[0:8] over a[0:4]\n");
  fflush(stdout);
#pragma omp target map(tofrom : a[0:8])
  { a[5] = 50; }
  printf("unreachable: a[5]=%d\n", a[5]);
  return 0;
}
