// Pointer attachment through unstructured mapping: target enter data
// map(to: s, s.p[0:n]) attaches the device copy of s.p to the device copy
// of the pointee; several regions then use it without further copies;
// target update from(s.p[0:n]) brings back the pointee only; exit data
// removes both; the host s.p keeps its host value throughout.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct S {
  int n;
  double *p;
};

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int n = 6;
  double *buf = malloc(n * sizeof(double));
  for (int i = 0; i < n; ++i) buf[i] = i;
  struct S s = {n, buf};

#pragma omp target enter data map(to : s, s.p[0:n])
  printf("after enter: s present=%d pointee present=%d\n", omp_target_is_present(&s, dev),
         omp_target_is_present(buf, dev));
  if (!omp_target_is_present(&s, dev) || !omp_target_is_present(buf, dev)) errors++;

  /* region 1: implicit use of s (present), write through s.p */
#pragma omp target
  {
    for (int i = 0; i < s.n; ++i) s.p[i] *= 2.0;
  }
  /* region 2: explicit map of s again (present: no copy) */
  for (int i = 0; i < n; ++i) buf[i] = -1.0; /* host only, not copied */
#pragma omp target map(tofrom : s)
  {
    for (int i = 0; i < s.n; ++i) s.p[i] += 0.5;
  }
  printf("host buf[0..1] before update: %.1f %.1f\n", buf[0], buf[1]);
  if (buf[0] != -1.0 || buf[1] != -1.0) errors++;

  /* region 3: device result into a mapped scalar */
  double sum = 0;
#pragma omp target map(tofrom : sum)
  {
    for (int i = 0; i < s.n; ++i) sum += s.p[i];
  }
  printf("device sum=%.1f\n", sum);
  if (sum != 33.0) errors++; /* 2*(0+..+5) + 6*0.5 */

#pragma omp target update from(s.p[0:n])
  printf("after update: buf=%.1f %.1f %.1f %.1f %.1f %.1f p kept=%d\n", buf[0], buf[1], buf[2],
         buf[3], buf[4], buf[5], s.p == buf);
  if (buf[5] != 10.5 || s.p != buf) errors++;

  /* update of the struct itself: s.n comes back, s.p must stay the host value */
#pragma omp target
  { s.n = 5; }
#pragma omp target update from(s)
  printf("after update from(s): n=%d p kept=%d\n", s.n, s.p == buf);
  if (s.n != 5) errors++;

  /* second enter of the same data only bumps reference counts */
#pragma omp target enter data map(to : s, s.p[0:n])
#pragma omp target exit data map(from : s, s.p[0:n])
  printf("after first exit: s present=%d pointee present=%d\n", omp_target_is_present(&s, dev),
         omp_target_is_present(buf, dev));
  if (!omp_target_is_present(&s, dev) || !omp_target_is_present(buf, dev)) errors++;

#pragma omp target
  { s.p[0] = 99.0; }
#pragma omp target exit data map(from : s.p[0:n]) map(release : s)
  printf("after final exit: s present=%d pointee present=%d buf[0]=%.1f p kept=%d\n",
         omp_target_is_present(&s, dev), omp_target_is_present(buf, dev), buf[0], s.p == buf);
  if (omp_target_is_present(&s, dev) || omp_target_is_present(buf, dev) || buf[0] != 99.0)
    errors++;

  free(buf);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
