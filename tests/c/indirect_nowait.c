// `declare target indirect` with `nowait` (OpenMP 5.2 §7.8.2, §13.8): deferred target tasks
// chained by dependences call host function pointers passed firstprivate.
#include <stdio.h>

#pragma omp begin declare target indirect
void scale(int *v, int n) {
  for (int i = 0; i < n; i++)
    v[i] *= 3;
}
void shift(int *v, int n) {
  for (int i = 0; i < n; i++)
    v[i] += 1;
}
#pragma omp end declare target

typedef void (*step_t)(int *, int);

int main(void) {
  enum { N = 64 };
  int a[N], b[N];
  for (int i = 0; i < N; i++)
    a[i] = b[i] = i;
  step_t steps[4] = {scale, shift, shift, scale};
  int errors = 0;

#pragma omp target enter data map(to : a, b)
  // Each chain applies its steps in order; the two chains are independent.
  for (int s = 0; s < 4; s++) {
    step_t f = steps[s], g = steps[(s + 1) % 4];
#pragma omp target nowait depend(inout : a) firstprivate(f)
    f(a, N);
#pragma omp target nowait depend(inout : b) firstprivate(g)
    g(b, N);
  }
#pragma omp taskwait
#pragma omp target exit data map(from : a, b)

  // a: scale, shift, shift, scale: ((3i + 1) + 1) * 3 = 9i + 6;
  // b: shift, shift, scale, scale: (i + 2) * 9 = 9i + 18.
  for (int i = 0; i < N; i++)
    if (a[i] != 9 * i + 6 || b[i] != 9 * i + 18)
      errors++;
  printf("a[5]=%d b[5]=%d a[63]=%d b[63]=%d\n", a[5], b[5], a[63], b[63]);

  // Several independent nowait regions, each with its own function pointer.
  int r[8];
  for (int i = 0; i < 8; i++) {
    int *slot = &r[i];
    step_t f = steps[i % 4];
    *slot = i;
#pragma omp target nowait map(tofrom : slot[0 : 1]) firstprivate(f)
    f(slot, 1);
  }
#pragma omp taskwait
  printf("r: %d %d %d %d %d %d %d %d\n", r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
  for (int i = 0; i < 8; i++)
    if (r[i] != (i % 4 == 0 || i % 4 == 3 ? 3 * i : i + 1))
      errors++;

  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
