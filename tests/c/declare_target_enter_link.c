// CFLAGS: -fopenmp-version=52
// `declare target` with the `enter` clause (OpenMP 5.2 §7.8.1, the new name of `to`) and
// the `link` clause: an `enter` variable has a device copy for the whole program, updated
// only by `target update` (or a map with `always`); a `link` variable has device storage
// only while it is mapped, and each mapping starts from the host's values.
#include <omp.h>
#include <stdio.h>

int entered[4] = {1, 2, 3, 4};
#pragma omp declare target enter(entered)
int linked[4] = {10, 20, 30, 40};
#pragma omp declare target link(linked)

#pragma omp begin declare target
int sum_entered(void) {
  int s = 0;
  for (int i = 0; i < 4; i++)
    s += entered[i];
  return s;
}
#pragma omp end declare target

int main(void) {
  int dev = omp_get_default_device();
  int errors = 0;
  printf("present: entered %d linked %d\n", omp_target_is_present(entered, dev),
         omp_target_is_present(linked, dev));

  // The device copy of `entered` is independent of the host's.
  entered[0] = 100;
  int s = 0;
#pragma omp target map(from : s)
  s = sum_entered();
  printf("device sum before update %d\n", s);
  if (s != 10)
    errors++;
#pragma omp target update to(entered)
#pragma omp target map(from : s)
  {
    s = sum_entered();
    entered[3] = -4;
  }
  printf("device sum after update %d, host entered[3] %d\n", s, entered[3]);
  if (s != 109 || entered[3] != 4)
    errors++;
#pragma omp target map(always, from : entered)
  ;
  printf("after always from: entered[3] %d\n", entered[3]);
  if (entered[3] != -4)
    errors++;

  // `linked` is mapped per construct.
  int got = 0;
#pragma omp target map(tofrom : linked) map(from : got)
  {
    got = linked[2];
    linked[2] = 33;
  }
  printf("linked: device saw %d, host now %d\n", got, linked[2]);
  if (got != 30 || linked[2] != 33)
    errors++;
#pragma omp target data map(to : linked)
  {
    printf("linked present inside target data: %d\n", omp_target_is_present(linked, dev));
    linked[0] = -1; // not seen: the device copy was made at entry
#pragma omp target map(from : got)
    got = linked[0];
    printf("device copy of linked[0]: %d\n", got);
    if (got != 10)
      errors++;
  }
  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
