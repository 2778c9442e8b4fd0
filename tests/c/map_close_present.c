// 'close' modifier (a hint; semantics same as without it) and 'present'
// modifier on data that is mapped (must succeed).
#include <omp.h>
#include <stdio.h>

#define N 6

int main(void) {
  int errors = 0;
  int a[N] = {1, 2, 3, 4, 5, 6};
  int b[N] = {0};

#pragma omp target map(close, to : a) map(close, tofrom : b)
  {
    for (int i = 0; i < N; ++i) b[i] = a[i] * 2;
  }
  printf("close: b[5]=%d\n", b[5]);
  if (b[5] != 12) errors++;

#pragma omp target data map(to : a) map(tofrom : b)
  {
    /* present on mapped data: OK, no extra copies */
#pragma omp target map(present, to : a) map(present, tofrom : b)
    {
      for (int i = 0; i < N; ++i) b[i] = a[i] + 100;
    }
    printf("present (inside data): host b[0]=%d (not yet copied)\n", b[0]);
    if (b[0] != 2) errors++;
    /* present on a contained sub-section is fine as well */
#pragma omp target map(present, alloc : a[1:3])
    { a[2] = -3; }
#pragma omp target update from(present : a[2:1])
    printf("present section update: host a[2]=%d\n", a[2]);
    if (a[2] != -3) errors++;
  }
  printf("after data: b[0]=%d b[5]=%d\n", b[0], b[5]);
  if (b[0] != 101 || b[5] != 106) errors++;

  /* present with enter/exit data */
  int s = 4;
#pragma omp target enter data map(to : s)
#pragma omp target enter data map(present, to : s)
#pragma omp target map(present, tofrom : s)
  { s *= 10; }
#pragma omp target exit data map(present, release : s)
#pragma omp target exit data map(present, from : s)
  printf("s=%d present=%d\n", s, omp_target_is_present(&s, omp_get_default_device()));
  if (s != 40) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
