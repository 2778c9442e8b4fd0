// When does a declare target global become present on a device?
// LLVM loads a device image on a device at the first data-mapping or
// target construct that uses that device (not at omp_target_alloc).
// The declare-target entry is then present for omp_target_is_present.
// STATUS(gpu): signal 6 (device 2 does not exist beside one GPU: LLVM 19 and ours end with
// the same fatal error there)
#include <omp.h>
#include <stdio.h>

#pragma omp declare target
int g = 5;
#pragma omp end declare target

static void show(const char *when) {
  printf("%-22s present on dev0..3: %d %d %d %d\n", when, omp_target_is_present(&g, 0),
         omp_target_is_present(&g, 1), omp_target_is_present(&g, 2),
         omp_target_is_present(&g, 3));
}

int main(void) {
  show("start");
  void *p = omp_target_alloc(4, 1);
  show("after alloc on 1");
  int x = 1;
#pragma omp target enter data map(to : x) device(2)
  show("after enter data on 2");
#pragma omp target
  { g++; }
  show("after region on 0");
#pragma omp target update from(g) device(3)
  show("after update on 3");
  printf("g=%d (device 3 copy is the initial value)\n", g);
#pragma omp target update from(g) device(0)
  printf("g=%d (device 0 copy was incremented)\n", g);
  int ok = (g == 6) && omp_target_is_present(&g, 0) && omp_target_is_present(&g, 2) &&
           omp_target_is_present(&g, 3);
#pragma omp target exit data map(delete : x) device(2)
  omp_target_free(p, 1);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return 0;
}
