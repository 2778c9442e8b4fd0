// Pointer-based sections p[0:n], p[k:m] on heap memory, and mapping a
// contained subsection of an already-mapped array (allowed: no new
// allocation, refers into the existing mapping).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int n = 100;
  int *p = malloc(n * sizeof(int));
  for (int i = 0; i < n; ++i) p[i] = i;

#pragma omp target map(tofrom : p[0:n])
  {
    for (int i = 0; i < n; ++i) p[i] = p[i] * 2 + 1;
  }
  long s = 0;
  for (int i = 0; i < n; ++i) s += p[i];
  printf("p[0:n]: p[0]=%d p[99]=%d sum=%ld\n", p[0], p[99], s);
  if (p[0] != 1 || p[99] != 199 || s != 10000) errors++;

  /* section not starting at zero */
#pragma omp target map(tofrom : p[10:5])
  {
    for (int i = 10; i < 15; ++i) p[i] = 0;
  }
  printf("p[10:5] zeroed: p[9]=%d p[10]=%d p[14]=%d p[15]=%d\n", p[9], p[10], p[14], p[15]);
  if (p[9] != 19 || p[10] != 0 || p[14] != 0 || p[15] != 31) errors++;

  /* contained subsection of an existing mapping */
#pragma omp target enter data map(to : p[0:n])
  printf("present p[50]=%d\n", omp_target_is_present(&p[50], dev));
  for (int i = 0; i < n; ++i) p[i] = -1; /* host only */
#pragma omp target map(tofrom : p[20:10])
  {
    /* refers to the existing device copy: device values, not -1 */
    for (int i = 20; i < 30; ++i) p[i] = p[i] + 1000;
  }
  printf("after contained section region: host p[20]=%d (no copy back, still mapped)\n", p[20]);
  if (p[20] != -1) errors++;
#pragma omp target update from(p[20:10])
  printf("after update from p[20:10]: p[19]=%d p[20]=%d p[29]=%d p[30]=%d\n", p[19], p[20],
         p[29], p[30]);
  if (p[19] != -1 || p[20] != 1041 || p[29] != 1059 || p[30] != -1) errors++;

  /* a second pointer into the middle of the same block */
  int *q = p + 40;
  int got = 0;
#pragma omp target map(to : q[0:5]) map(from : got)
  { got = q[0] + q[4]; }
  printf("q[0:5] device: q[0]+q[4]=%d\n", got);
  if (got != 81 + 89) errors++;

#pragma omp target exit data map(release : p[0:n])
  printf("present after release=%d\n", omp_target_is_present(p, dev));
  if (omp_target_is_present(p, dev)) errors++;

  free(p);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
