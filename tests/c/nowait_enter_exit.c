// Deferred data-mapping constructs ordered by dependences:
// target enter data nowait depend(out:), target nowait depend(inout:),
// target update from nowait depend(in:), target exit data nowait
// depend(inout:), then taskwait.
#include <omp.h>
#include <stdio.h>

#define N 128

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int x[N], snap[N];
  for (int i = 0; i < N; ++i) x[i] = i;

#pragma omp target enter data map(to : x) nowait depend(out : x)
#pragma omp target nowait depend(inout : x) /* x is present: no copies */
  {
    for (int i = 0; i < N; ++i) x[i] = x[i] * 10 + 1;
  }
#pragma omp target update from(x) nowait depend(in : x)
#pragma omp taskwait
  /* after the update the host copy holds the device values, and x is still
     mapped (the update does not change the reference count) */
  printf("after update: x[0]=%d x[127]=%d present=%d\n", x[0], x[N - 1],
         omp_target_is_present(x, dev));
  for (int i = 0; i < N; ++i) {
    if (x[i] != i * 10 + 1) errors++;
    snap[i] = x[i];
  }
  if (!omp_target_is_present(x, dev)) errors++;

  /* host changes x; the device copy is not affected until an update to */
  for (int i = 0; i < N; ++i) x[i] = -1;
#pragma omp target nowait depend(inout : x)
  {
    for (int i = 0; i < N; ++i) x[i] += 5;
  }
#pragma omp target exit data map(from : x) nowait depend(inout : x)
#pragma omp taskwait
  printf("after exit from: x[0]=%d x[127]=%d present=%d\n", x[0], x[N - 1],
         omp_target_is_present(x, dev));
  for (int i = 0; i < N; ++i)
    if (x[i] != snap[i] + 5) errors++;
  if (omp_target_is_present(x, dev)) errors++;

  /* update to nowait, with alloc at entry and release at exit */
  int y[N];
  for (int i = 0; i < N; ++i) y[i] = 2 * i;
#pragma omp target enter data map(alloc : y) nowait depend(out : y)
#pragma omp target update to(y) nowait depend(inout : y)
#pragma omp target nowait depend(inout : y)
  {
    for (int i = 0; i < N; ++i) y[i] = y[i] + 1;
  }
#pragma omp target update from(y[0:N/2]) nowait depend(in : y)
#pragma omp target exit data map(release : y) nowait depend(inout : y)
#pragma omp taskwait
  /* lower half came back through the update, upper half was released
     without a copy */
  printf("y[0]=%d y[63]=%d y[64]=%d y[127]=%d present=%d\n", y[0], y[N / 2 - 1], y[N / 2],
         y[N - 1], omp_target_is_present(y, dev));
  for (int i = 0; i < N; ++i)
    if (y[i] != (i < N / 2 ? 2 * i + 1 : 2 * i)) errors++;
  if (omp_target_is_present(y, dev)) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
