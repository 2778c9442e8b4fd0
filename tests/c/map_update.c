// target update to(...) / from(...) on mapped data, including array
// sections and a no-op update of data that is not mapped.
#include <omp.h>
#include <stdio.h>

#define N 12

int main(void) {
  int errors = 0;
  int a[N];
  for (int i = 0; i < N; ++i) a[i] = i;

#pragma omp target data map(alloc : a)
  {
#pragma omp target update to(a)
#pragma omp target
    {
      for (int i = 0; i < N; ++i) a[i] += 100;
    }
    printf("host a[5]=%d (before update from)\n", a[5]);
    if (a[5] != 5) errors++;
#pragma omp target update from(a)
    printf("host a[5]=%d (after update from)\n", a[5]);
    if (a[5] != 105) errors++;

    /* host changes, pushed with update to on a section only */
    for (int i = 0; i < N; ++i) a[i] = -i;
#pragma omp target update to(a[4:3])
    int d[N];
#pragma omp target map(from : d)
    {
      for (int i = 0; i < N; ++i) d[i] = a[i];
    }
    printf("device view:");
    for (int i = 0; i < N; ++i) printf(" %d", d[i]);
    printf("\n");
    for (int i = 0; i < N; ++i) {
      int expect = (i >= 4 && i < 7) ? -i : 100 + i;
      if (d[i] != expect) errors++;
    }

    /* update from on a section */
#pragma omp target
    {
      for (int i = 0; i < N; ++i) a[i] = 1000 + i;
    }
#pragma omp target update from(a[8:2])
    printf("host after partial update from:");
    for (int i = 0; i < N; ++i) printf(" %d", a[i]);
    printf("\n");
    for (int i = 0; i < N; ++i) {
      int expect = (i >= 8 && i < 10) ? 1000 + i : -i;
      if (a[i] != expect) errors++;
    }
  }

  /* update of unmapped data: no effect, no error */
  int u = 9;
#pragma omp target update to(u)
#pragma omp target update from(u)
  printf("u=%d\n", u);
  if (u != 9) errors++;

  /* update with if(false) does nothing */
  int w = 1;
#pragma omp target enter data map(to : w)
#pragma omp target map(tofrom : w) /* present: no copy either way */
  { w = 2; }
#pragma omp target update from(w) if (0)
  printf("w after if(0) update=%d\n", w);
  if (w != 1) errors++;
#pragma omp target update from(w) if (1)
  printf("w after if(1) update=%d\n", w);
  if (w != 2) errors++;
#pragma omp target exit data map(delete : w)

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
