// target data inside an enter/exit data pair: the structured region does
// not copy on entry or exit because the data is already present; a 'from'
// at a non-final exit does not copy back.
#include <omp.h>
#include <stdio.h>

#define N 5

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int a[N] = {0, 1, 2, 3, 4};

#pragma omp target enter data map(to : a)
  for (int i = 0; i < N; ++i) a[i] = -1; /* host-only */

#pragma omp target data map(tofrom : a)
  {
#pragma omp target
    {
      for (int i = 0; i < N; ++i) a[i] = a[i] * 100; /* device had 0..4 */
    }
  }
  printf("after target data: host a[2]=%d present=%d\n", a[2], omp_target_is_present(a, dev));
  if (a[2] != -1 || !omp_target_is_present(a, dev)) errors++;

  /* nested enter data + from at non-final exit */
#pragma omp target enter data map(alloc : a)   /* count 2 */
#pragma omp target exit data map(from : a)     /* count 1: no copy */
  printf("after non-final exit from: host a[2]=%d\n", a[2]);
  if (a[2] != -1) errors++;

  /* update from is explicit and always copies */
#pragma omp target update from(a)
  printf("after update from: host a=%d %d %d %d %d\n", a[0], a[1], a[2], a[3], a[4]);
  for (int i = 0; i < N; ++i)
    if (a[i] != 100 * i) errors++;

  for (int i = 0; i < N; ++i) a[i] = 7;
#pragma omp target exit data map(from : a)     /* count 0: copies back */
  printf("after final exit from: host a[4]=%d present=%d\n", a[4], omp_target_is_present(a, dev));
  if (a[4] != 400 || omp_target_is_present(a, dev)) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
