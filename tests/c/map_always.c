// The 'always' map-type modifier: always,to re-copies into an existing
// mapping; always,from copies back even when the reference count does not
// drop to zero.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int a[4] = {1, 2, 3, 4};
  int seen[4];

#pragma omp target enter data map(to : a)
  /* host modifies; a plain map(to:) on an existing mapping does not copy */
  a[0] = 10;
#pragma omp target map(to : a) map(from : seen)
  {
    for (int i = 0; i < 4; ++i) seen[i] = a[i];
  }
  printf("plain to: device a[0]=%d\n", seen[0]);
  if (seen[0] != 1) errors++;

  /* always,to forces the copy */
#pragma omp target map(always, to : a) map(from : seen)
  {
    for (int i = 0; i < 4; ++i) seen[i] = a[i];
  }
  printf("always,to: device a[0]=%d\n", seen[0]);
  if (seen[0] != 10) errors++;

  /* device writes; plain tofrom on a present mapping does not copy back */
#pragma omp target map(tofrom : a)
  {
    a[1] = 20;
  }
  printf("plain tofrom: host a[1]=%d\n", a[1]);
  if (a[1] != 2) errors++;

  /* always,from copies back although the mapping stays */
#pragma omp target map(always, from : a)
  {
    a[2] = 30;
  }
  printf("always,from: host a[1]=%d a[2]=%d present=%d\n", a[1], a[2],
         omp_target_is_present(a, omp_get_default_device()));
  if (a[1] != 20 || a[2] != 30) errors++;
  if (!omp_target_is_present(a, omp_get_default_device())) errors++;

  /* always,tofrom on target data */
  a[3] = 40;
#pragma omp target data map(always, tofrom : a)
  {
#pragma omp target
    { a[3] += 1; }
  }
  printf("always,tofrom data: host a[3]=%d\n", a[3]);
  if (a[3] != 41) errors++;

  /* exit data with always,from: copies back even if not last reference */
#pragma omp target enter data map(to : a)  /* ref count now 2 */
#pragma omp target
  { a[0] = 99; }
#pragma omp target exit data map(always, from : a) /* 2 -> 1, copies */
  printf("exit always,from (not last): host a[0]=%d present=%d\n", a[0],
         omp_target_is_present(a, omp_get_default_device()));
  if (a[0] != 99) errors++;
#pragma omp target exit data map(delete : a)
  printf("after delete present=%d\n", omp_target_is_present(a, omp_get_default_device()));

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
