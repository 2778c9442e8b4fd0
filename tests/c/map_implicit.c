// Implicit data-mapping rules: scalars are firstprivate (device changes
// are not visible), arrays are map(tofrom), pointers are firstprivate
// pointers (zero-length section attached when the pointee is mapped).
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int scalar = 5;
  double dval = 1.25;
  int arr[5] = {1, 2, 3, 4, 5};
  int seen_scalar = 0;

#pragma omp target map(from : seen_scalar)
  {
    seen_scalar = scalar; /* firstprivate: initialised from host */
    scalar = 123;         /* private: does not come back */
    dval *= 2.0;
    for (int i = 0; i < 5; ++i) arr[i] *= 10; /* tofrom: comes back */
  }
  printf("seen_scalar=%d scalar=%d dval=%.2f\n", seen_scalar, scalar, dval);
  printf("arr=%d %d %d %d %d\n", arr[0], arr[1], arr[2], arr[3], arr[4]);
  if (seen_scalar != 5 || scalar != 5 || dval != 1.25) errors++;
  for (int i = 0; i < 5; ++i)
    if (arr[i] != 10 * (i + 1)) errors++;

  /* defaultmap(tofrom:scalar) turns the scalar into a tofrom map */
#pragma omp target defaultmap(tofrom : scalar)
  { scalar += 1; }
  printf("defaultmap tofrom scalar=%d\n", scalar);
  if (scalar != 6) errors++;

  /* a pointer whose pointee is mapped by an enclosing data region: the
     pointer is translated to the device address */
  int buf[4] = {7, 8, 9, 10};
  int *p = buf;
  int total = 0;
#pragma omp target data map(tofrom : buf)
  {
#pragma omp target map(tofrom : total)
    {
      for (int i = 0; i < 4; ++i) {
        total += p[i];
        p[i] = 0;
      }
    }
    printf("inside data region: host buf[0]=%d\n", buf[0]);
    if (buf[0] != 7) errors++;
  }
  printf("total=%d host buf[0]=%d\n", total, buf[0]);
  if (total != 34 || buf[0] != 0) errors++;

  /* struct variable (aggregate): implicit tofrom */
  struct { int x, y; } pt = {3, 4};
#pragma omp target
  { pt.x = pt.x * pt.y; }
  printf("struct pt.x=%d\n", pt.x);
  if (pt.x != 12) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
