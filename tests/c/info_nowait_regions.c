// ENV: LIBOMPTARGET_INFO=9
// STDERR
// CFLAGS: -g
// LIBOMPTARGET_INFO bit 0x01 names each data construct as LLVM 19 does, with the nowait form
// of its entry point when it has `nowait` (`being_nowait_mapper`, `end_nowait_mapper`,
// `update_nowait_mapper`), and bit 0x08 shows the mappings it makes and removes. A
// `delete` of a global's infinite reference count reads "decremented" (nothing is removed),
// and an entry removed by an exit names the size of the list item that removed it.
#include <omp.h>
#include <stdio.h>

double coef[4] = {1, 2, 3, 4};
#pragma omp declare target(coef)

int main(void) {
  int v[8] = {0};
  int *p = v;
#pragma omp target enter data map(to : v) nowait
#pragma omp taskwait
  v[0] = 3;
#pragma omp target update to(v[0:1]) nowait
#pragma omp taskwait
#pragma omp target map(tofrom : v)
  { v[1] = v[0] + (int)coef[3]; }
#pragma omp target exit data map(from : v) nowait
#pragma omp taskwait
  printf("v[1]=%d\n", v[1]);

  /* the entry for v is created by the whole array and removed by a section of it */
#pragma omp target enter data map(to : v)
#pragma omp target exit data map(from : p[0:2])
  printf("v present: %d\n", omp_target_is_present(v, omp_get_default_device()));
#pragma omp target exit data map(delete : coef)
  printf("coef present: %d\n", omp_target_is_present(coef, omp_get_default_device()));
  return 0;
}
