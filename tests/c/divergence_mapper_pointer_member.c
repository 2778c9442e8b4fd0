// DIVERGENCE: LLVM 19 never counts the reference of a mapper's first component (the struct), so the struct stays mapped and later constructs keep a stale device copy
// A default mapper on a struct with a pointer member (OpenMP 5.2 §5.8.8).
// Specified result: every construct adds and removes one reference to the
// struct, so after `target map(tofrom: a)` neither the struct nor its pointee
// is present, and device writes through the attached pointer reach the host
// at `target update from` and at the end of `target data`.
// LLVM 19 leaves the struct mapped after each construct (DynRefCount stays 1)
// and, when the struct is reused, copies the stale pointee back: see
// docs/DIVERGENCES.md. The harness checks ours against divergence_mapper_pointer_member.expected
// and that LLVM 19 still differs.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int len;
  double *data;
} vec_t;
#pragma omp declare mapper(vec_t v) map(v, v.data[0:v.len])

typedef struct {
  int len;
  int pad;
  double *data;
} vec2_t;
#pragma omp declare mapper(vec2_t v) map(v.len, v.data[0:v.len])

int main(void) {
  int dev = omp_get_default_device();
  double b1[4] = {0}, b2[4] = {0}, b3[4] = {0}, b4[4] = {0};

  vec_t a = {4, b1};
#pragma omp target map(tofrom : a)
  { a.data[0] = 1; }
  printf("A region:     struct present=%d pointee present=%d data[0]=%.0f\n",
         omp_target_is_present(&a, dev), omp_target_is_present(a.data, dev), a.data[0]);

  vec_t b = {4, b2};
#pragma omp target enter data map(to : b)
  printf("B enter:      struct present=%d pointee present=%d\n", omp_target_is_present(&b, dev),
         omp_target_is_present(b.data, dev));
#pragma omp target
  { b.data[1] = 5; }
#pragma omp target update from(b)
  printf("B update:     data[1]=%.0f\n", b.data[1]);
#pragma omp target exit data map(release : b)
  printf("B exit:       struct present=%d pointee present=%d\n", omp_target_is_present(&b, dev),
         omp_target_is_present(b.data, dev));

  vec2_t c = {4, 0, b3};
#pragma omp target map(tofrom : c)
  { c.data[2] = 7; }
  printf("C region:     struct present=%d pointee present=%d data[2]=%.0f\n",
         omp_target_is_present(&c, dev), omp_target_is_present(c.data, dev), c.data[2]);

  vec_t d = {4, b4};
#pragma omp target data map(tofrom : d)
  {
#pragma omp target
    { d.data[3] = 9; }
  }
  printf("D data:       struct present=%d pointee present=%d data[3]=%.0f\n",
         omp_target_is_present(&d, dev), omp_target_is_present(d.data, dev), d.data[3]);
  return 0;
}
