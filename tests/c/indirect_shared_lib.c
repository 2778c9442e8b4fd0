// SHARED-LIB: indirect_shared_lib_lib.c
// `declare target indirect` across images (OpenMP 5.2 §7.8.2): a shared library that
// registers its own offload image defines indirect functions; the program's target regions
// call them through host function pointers, and the library's regions call the program's.
#include <stdio.h>

typedef int (*op_t)(int);
op_t lib_op(int which);
int lib_apply(op_t f, int x);

#pragma omp begin declare target indirect
int main_inc(int x) { return x + 1; }
#pragma omp end declare target

int main(void) {
  int errors = 0;
  op_t neg = lib_op(0), triple = lib_op(1);
  int r1 = 0, r2 = 0;
#pragma omp target map(from : r1, r2) firstprivate(neg, triple)
  {
    r1 = neg(4);
    r2 = triple(neg(4));
  }
  printf("program region, library functions: %d %d\n", r1, r2);
  if (r1 != -4 || r2 != -12)
    errors++;

  // The library's region calls a function of the program, and one of its own.
  int r3 = lib_apply(main_inc, 41);
  int r4 = lib_apply(lib_op(1), 5);
  printf("library region: %d %d\n", r3, r4);
  if (r3 != 42 || r4 != 15)
    errors++;

  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
