// STDERR
// target update and target exit data on a section that is larger than (not
// contained in) the existing mapping: LLVM 19 treats the list item as not
// present and silently does nothing (no copy, no reference-count change,
// no diagnostic). Contrast with a target region or enter data, which
// reports "explicit extension not allowed" (see err_extend_mapping.c).
#include <omp.h>
#include <stdio.h>

static void show(const char *when, const int *a) {
  printf("%-28s host a = %d %d %d %d %d %d %d %d\n", when, a[0], a[1], a[2], a[3], a[4], a[5],
         a[6], a[7]);
}

int main(void) {
  int dev = omp_get_default_device();
  int a[8] = {0, 1, 2, 3, 4, 5, 6, 7};
#pragma omp target enter data map(to : a[0:4])
#pragma omp target map(alloc : a[0:4])
  {
    for (int i = 0; i < 4; ++i) a[i] = 100 + i;
  }
  for (int i = 0; i < 8; ++i) a[i] = -i;
  show("start:", a);
#pragma omp target update from(a[0:8])
  show("update from a[0:8]:", a);
#pragma omp target update to(a[0:8])
#pragma omp target update from(a[0:4])
  show("update to a[0:8], from a[0:4]:", a);
#pragma omp target exit data map(from : a[0:8])
  printf("exit from a[0:8]: present a[0]=%d\n", omp_target_is_present(a, dev));
  show("", a);
#pragma omp target exit data map(delete : a[0:8])
  printf("exit delete a[0:8]: present a[0]=%d\n", omp_target_is_present(a, dev));
#pragma omp target exit data map(delete : a[0:4])
  printf("exit delete a[0:4]: present a[0]=%d\n", omp_target_is_present(a, dev));
  /* an update that starts before the mapping is not found either */
  int b[8] = {0};
#pragma omp target enter data map(to : b[4:4])
#pragma omp target map(alloc : b[4:4])
  { b[4] = 44; }
#pragma omp target update from(b[2:4])
  printf("update from b[2:4] over b[4:4]: b[4]=%d\n", b[4]);
#pragma omp target update from(b[4:2])
  printf("update from b[4:2]: b[4]=%d\n", b[4]);
#pragma omp target exit data map(release : b[4:4])
  return 0;
}
