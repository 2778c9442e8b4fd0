// ENV: LIBOMPTARGET_INFO=64
// STDERR
// CFLAGS: -g
// LIBOMPTARGET_INFO bit 0x40 (LLVM's OMP_INFOTYPE_EMPTY_MAPPING): an explicit list item that
// has no device counterpart after a construct's entry, such as use_device_ptr of a pointer
// whose pointee is not mapped, use_device_addr of an unmapped variable, or a zero-length
// array section of unmapped data, is reported as `variable NAME does not have a valid device
// counterpart`. Mapped items, struct members and implicit items are not (OpenMP 5.2 §5.4.10,
// §5.4.11: such a list item keeps its host address).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int x = 1;
  int *p = malloc(4 * sizeof(int));
  int *q = malloc(4 * sizeof(int));
  int a[4] = {1, 2, 3, 4};
  for (int i = 0; i < 4; ++i) p[i] = q[i] = i;

  /* the values p and &x take inside are not printed: the specification leaves them open */
#pragma omp target data use_device_ptr(p)
  { printf("use_device_ptr of an unmapped pointer\n"); }
#pragma omp target data use_device_addr(x)
  { printf("use_device_addr of an unmapped variable\n"); }

  /* mapped: no line */
#pragma omp target data map(to : q[0:4], a) use_device_ptr(q) use_device_addr(a)
  { printf("mapped: q and a translated\n"); }

  /* a zero-length section of unmapped data, on enter data and on a region */
#pragma omp target enter data map(to : p[0:0])
  int n = 0;
#pragma omp target map(to : p[0:0]) map(tofrom : n)
  { n = 1; }
  printf("zero-length sections: n=%d\n", n);

  /* an implicit zero-length pointer: no line */
#pragma omp target map(tofrom : n)
  { n += (p != NULL); }
  printf("implicit pointer: n=%d\n", n);
  free(p);
  free(q);
  return 0;
}
