// GPU-UNCOMPARED: unified shared memory on an H200 without HMM/ATS (PAGEABLE_MEMORY_ACCESS 0): ours refuses at registration, LLVM 19 faults (docs/GPU.md)
// `unified_shared_memory` with the `close` map-type modifier (OpenMP 5.2 §5.8.3): `close`
// asks for a device copy, which follows the ordinary mapping rules (copies at entry and exit,
// `target update`, reference counts); a map without `close` of data already mapped uses
// that mapping; data never mapped with `close` is used in place.
#include <omp.h>
#include <stdio.h>

#pragma omp requires unified_shared_memory

int main(void) {
  int dev = omp_get_default_device();
  int errors = 0;
  int a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};

#pragma omp target data map(close, to : a) map(to : b)
  {
    printf("a present %d, b present %d\n", omp_target_is_present(a, dev),
           omp_target_is_present(b, dev));
    // A device write to the copy of `a` stays on the device; `b`, mapped without `close`,
    // is used in place.
#pragma omp target map(tofrom : a, b)
    {
      a[0] = 100;
      b[0] = 500;
    }
    printf("after region: a[0]=%d b[0]=%d\n", a[0], b[0]);
    if (a[0] != 1 || b[0] != 500)
      errors++;
#pragma omp target update from(a[0 : 1])
    printf("after update from: a[0]=%d\n", a[0]);
    if (a[0] != 100)
      errors++;
    a[1] = 20;
#pragma omp target update to(a[1 : 1])
    int seen = 0;
#pragma omp target map(from : seen)
    seen = a[1];
    printf("device sees a[1]=%d\n", seen);
    if (seen != 20)
      errors++;
  }
  printf("a present after the data region: %d\n", omp_target_is_present(a, dev));

  // `close` on a region alone: copied in and out around the region.
  int c = 7;
#pragma omp target map(close, tofrom : c)
  c *= 6;
  printf("c=%d\n", c);
  if (c != 42)
    errors++;

  // Enter/exit data with `close` keep a device copy between regions.
#pragma omp target enter data map(close, to : b)
  b[1] = -1; // host write, not seen by the device copy
  int got = 0;
#pragma omp target map(from : got)
  got = b[1];
#pragma omp target exit data map(close, from : b)
  printf("device copy kept b[1]=%d, host after exit b[1]=%d\n", got, b[1]);
  if (got != 6 || b[1] != 6)
    errors++;

  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
