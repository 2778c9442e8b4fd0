// LLVM 19 behaviour (quirk, deterministic on the host device) with a
// default mapper on a struct that has a pointer member:
//  - after a target region with map(tofrom: s) the struct's own mapping is
//    left in the table (DynRefCount stays 1), only the pointee is removed;
//  - with enter data + a region + update from on the same struct, the
//    device write is not seen after 'update from' (apparently the present
//    struct is re-sent, so the device struct holds the host pointer again
//    and the stale device pointee is copied back over the host data).
// The program prints what happens; it does not judge it.
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
