// `declare target indirect` (OpenMP 5.1 §2.14.7, 5.2 §7.8.2): a host function pointer
// passed to a target region, explicitly or implicitly firstprivate, calls the device version
// of its function. Whether it compares equal to the function's name inside the region is not
// specified: clang 19 translates the pointer when it is passed (equal), clang 22 only when it
// is called (not equal); the comparison is printed for the runtimes to agree on, not checked.
#include <stdio.h>

#pragma omp begin declare target indirect
int add1(int x) { return x + 1; }
int twice(int x) { return 2 * x; }
int square(int x) { return x * x; }
#pragma omp end declare target

typedef int (*op_t)(int);

int main(void) {
  op_t ops[3] = {add1, twice, square};
  int errors = 0;

  // Explicitly firstprivate, one region per function.
  for (int i = 0; i < 3; i++) {
    op_t f = ops[i];
    int r = -1, same = -1;
#pragma omp target map(from : r, same) firstprivate(f)
    {
      r = f(7);
      same = (f == add1) + 2 * (f == twice) + 4 * (f == square);
    }
    printf("op %d: f(7)=%d identity=%d\n", i, r, same);
    if (r != ops[i](7))
      errors++;
  }

  // Implicitly firstprivate (a scalar pointer referenced in the region), in a loop run by
  // teams of threads.
  op_t g = square;
  long sum = 0;
#pragma omp target teams distribute parallel for reduction(+ : sum)
  for (int i = 0; i < 100; i++)
    sum += g(i);
  printf("sum of squares below 100: %ld\n", sum);
  if (sum != 328350)
    errors++;

  // Two pointers in one region, and a null pointer that stays null.
  op_t a = add1, b = twice, n = 0;
  int r = -1, isnull = -1;
#pragma omp target map(from : r, isnull)
  {
    r = b(a(20));
    isnull = (n == 0);
  }
  printf("twice(add1(20))=%d null stays null=%d\n", r, isnull);
  if (r != 42 || isnull != 1)
    errors++;

  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
