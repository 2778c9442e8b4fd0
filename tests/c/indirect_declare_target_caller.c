// `declare target indirect` (OpenMP 5.2 §7.8.2): a host function pointer given to a target
// region reaches declare-target functions (without `indirect`) that call it, directly or
// through a table of pointers built on the device.
#include <stdio.h>

typedef int (*op_t)(int);

#pragma omp begin declare target indirect
int negate(int x) { return -x; }
int plus10(int x) { return x + 10; }
#pragma omp end declare target

#pragma omp begin declare target
int apply(op_t f, int x) { return f(x); }
int apply_twice(op_t f, int x) { return apply(f, apply(f, x)); }
int compose(const op_t *fs, int n, int x) {
  for (int i = 0; i < n; i++)
    x = fs[i](x);
  return x;
}
#pragma omp end declare target

int main(void) {
  int errors = 0;
  op_t f = plus10, g = negate;
  int r1 = 0, r2 = 0, r3 = 0;
  int in[4] = {1, 2, 3, 4}, out[4] = {0};
#pragma omp target map(from : r1, r2, r3) firstprivate(f, g)
  {
    r1 = apply(f, 5);
    r2 = apply_twice(g, 9);
    op_t chain[3] = {f, g, f};
    r3 = compose(chain, 3, 1);
  }
  printf("apply(plus10, 5)=%d apply_twice(negate, 9)=%d compose=%d\n", r1, r2, r3);
  if (r1 != 15 || r2 != 9 || r3 != -1)
    errors++;

#pragma omp target teams distribute parallel for map(to : in) map(from : out)
  for (int i = 0; i < 4; i++)
    out[i] = apply(i % 2 ? g : f, in[i]);
  printf("out: %d %d %d %d\n", out[0], out[1], out[2], out[3]);
  if (out[0] != 11 || out[1] != -2 || out[2] != 13 || out[3] != -4)
    errors++;

  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
