// GPU-UNCOMPARED: unified shared memory on an H200 without HMM/ATS (PAGEABLE_MEMORY_ACCESS 0): ours refuses at registration, LLVM 19 faults (docs/GPU.md)
// `unified_shared_memory` and the `present` modifier, as LLVM 19 treats them: a map with
// `present` of data that is not mapped uses it in place (under USM host data needs no
// device copy to be accessible), at entry and at exit; with `close` it is the ordinary
// error; `target update` with `present` of unmapped data is an error too (checked in
// err_usm_update_present.c).
#include <omp.h>
#include <stdio.h>

#pragma omp requires unified_shared_memory

int main(void) {
  int errors = 0;
  int a[8] = {0};
#pragma omp target enter data map(present, to : a)
  printf("enter data with present: ok, present=%d\n",
         omp_target_is_present(a, omp_get_default_device()));
#pragma omp target map(present, tofrom : a)
  a[0] = 9;
#pragma omp target exit data map(present, from : a)
  printf("exit data with present: ok, a[0]=%d\n", a[0]);
  if (a[0] != 9)
    errors++;
  // `present` holds once the data is mapped with `close`.
#pragma omp target enter data map(close, to : a)
#pragma omp target map(present, close, tofrom : a)
  a[1] = 5;
#pragma omp target exit data map(close, present, from : a)
  printf("close + present: a[1]=%d\n", a[1]);
  if (a[1] != 5)
    errors++;
  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
