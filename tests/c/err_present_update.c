// STATUS: signal 6
// STDERR
// 'present' motion modifier on target update for data that is not mapped:
// a different message ("motion modifier") than the map-type case.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int v = 3;
  int w = 4;
#pragma omp target enter data map(to : w)
#pragma omp target update from(present : w) /* fine */
  printf("update present on mapped w: ok w=%d\n", w);
#pragma omp target update to(v) /* not present, no modifier: silently nothing */
  printf("update without present on unmapped v: ok\n");
  printf("about to update v with present\n");
  fflush(stdout);
#pragma omp target update to(present : v)
  printf("unreachable\n");
  return 0;
}
