// ENV: LIBOMPTARGET_INFO=34
// STDERR
// CFLAGS: -g
// LIBOMPTARGET_INFO bit 0x20 (data transfers) names each copy after the mapping table entry it
// goes to or comes from, as LLVM 19 does, not after the list item: a struct member's copy is
// named after its struct's entry (`unknown` for the combined entry clang gives no name), an
// attached pointer's copy (the device pointer written into the struct) after the pointer's
// entry, a `target update` of part of an array after the array's entry, and a `declare target`
// global's after its symbol. Bit 0x02 shows the lookups (omp_target_is_present,
// omp_get_mapped_ptr and each region's arguments included).
#include <omp.h>
#include <stdio.h>

int limits[2] = {5, 6};
#pragma omp declare target(limits)

struct Rec {
  int id;
  double w;
  int *vals;
};

int main(void) {
  int dev = omp_get_default_device();
  int data[6] = {1, 2, 3, 4, 5, 6};
  struct Rec r = {7, 0.5, data};
  int whole[8] = {0};

#pragma omp target enter data map(to : whole)
#pragma omp target enter data map(to : r.id, r.w)
  printf("present: %d %d\n", omp_target_is_present(&r.w, dev), omp_get_mapped_ptr(whole, dev) != NULL);
  int sum = 0;
#pragma omp target map(to : r.vals[1:4]) map(tofrom : sum)
  { sum = r.vals[1] + r.vals[4] + limits[1]; }
  printf("sum=%d\n", sum);

  whole[3] = 33;
#pragma omp target update to(whole[2:2])
  limits[0] = 50;
#pragma omp target update to(limits)
#pragma omp target map(tofrom : sum)
  { sum = whole[3] + limits[0]; }
#pragma omp target update from(whole[1:1], limits[0:1])
  printf("sum=%d\n", sum);
#pragma omp target exit data map(release : whole, r.id, r.w)
  return 0;
}
