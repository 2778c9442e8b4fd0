// `indirect(invoked-by-fptr)` (OpenMP 5.2 §7.8.2): with an expression that evaluates to
// false the procedures are ordinary declare-target procedures, callable directly in target
// regions but not through host function pointers; with a true one they are indirect. As in
// LLVM 19, the runtime maps each indirect procedure's host address to its device version
// when it loads the image (so omp_target_is_present sees it after the first construct) and
// maps nothing for the others. (clang 19 emits no indirect entry for `indirect(expr)` even
// when the expression is true, so the indirect procedure here uses the bare clause.)
#include <omp.h>
#include <stdio.h>

#define NEVER 0
#pragma omp begin declare target indirect(NEVER)
int plain_add(int a, int b) { return a + b; }
#pragma omp end declare target

#pragma omp begin declare target indirect
int via_pointer(int a) { return a * 5; }
#pragma omp end declare target

int plain_mul(int a, int b) { return a * b; }
#pragma omp declare target to(plain_mul) indirect(0)

int main(void) {
  int dev = omp_get_default_device();
  int errors = 0;
  int (*f)(int) = via_pointer;
  int r1 = 0, r2 = 0, r3 = 0;
#pragma omp target map(from : r1, r2, r3) firstprivate(f)
  {
    r1 = plain_add(2, 3);
    r2 = plain_mul(4, 5);
    r3 = f(7);
  }
  printf("direct calls %d %d, through a pointer %d\n", r1, r2, r3);
  if (r1 != 5 || r2 != 20 || r3 != 35)
    errors++;
  printf("mapped: via_pointer %d plain_add %d plain_mul %d\n",
         omp_target_is_present((void *)via_pointer, dev),
         omp_target_is_present((void *)plain_add, dev),
         omp_target_is_present((void *)plain_mul, dev));
  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
