// A pointer referenced in a target region without a map clause is treated
// as a zero-length array section (OpenMP 5.2 §5.8.5 implicit data-mapping
// rules). §5.8.6 (pointer initialization for device data environments):
// if the pointee is mapped, the device pointer points to the corresponding
// storage; if no matched candidate is found, the pointer keeps the value
// of the original pointer (OpenMP 5.1 changed this from NULL).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int *p = malloc(4 * sizeof(int));
  int *q = malloc(4 * sizeof(int));
  int *nul = NULL;
  for (int i = 0; i < 4; ++i) p[i] = q[i] = i;

#pragma omp target enter data map(to : p[0:4])
  void *mp = omp_get_mapped_ptr(p, dev);
  void *mp2 = omp_get_mapped_ptr(p + 2, dev);
  int *p2 = p + 2;

  /* mapped pointee, pointer to its start and into its middle */
  int at_mapped = -1, at_mapped2 = -1, val = -1;
#pragma omp target map(from : at_mapped, at_mapped2, val) map(to : mp, mp2)
  {
    at_mapped = ((void *)p == mp);
    at_mapped2 = ((void *)p2 == mp2);
    val = p2[1];
    p[0] = 100;
  }
  printf("mapped: p==mapped %d p+2==mapped %d p2[1]=%d host p[0]=%d\n", at_mapped, at_mapped2,
         val, p[0]);
  if (at_mapped != 1 || at_mapped2 != 1 || val != 3 || p[0] != 0) errors++;

  /* NULL pointer stays NULL */
  int isnull = -1;
#pragma omp target map(from : isnull)
  { isnull = (nul == NULL); }
  printf("NULL pointer: is_null=%d\n", isnull);
  if (isnull != 1) errors++;

  /* pointee not mapped: the device pointer keeps the host value */
  void *qv = q;
  int kept = -1;
#pragma omp target map(from : kept) map(to : qv)
  { kept = ((void *)q == qv); }
  printf("unmapped pointee: pointer keeps host value=%d present after=%d\n", kept,
         omp_target_is_present(q, dev));
  if (kept != 1 || omp_target_is_present(q, dev)) errors++;

  /* a device address from omp_target_alloc is not a host address in the
     table either: it passes through unchanged and can be used on the device */
  int *d = omp_target_alloc(4 * sizeof(int), dev);
  void *dv = d;
  int zero = 0;
  omp_target_memcpy(d, &zero, sizeof(int), 0, 0, dev, omp_get_initial_device());
  int dkept = -1;
#pragma omp target map(from : dkept) map(to : dv)
  {
    dkept = ((void *)d == dv);
    if (dkept) d[0] = 42;
  }
  int back = 0;
  omp_target_memcpy(&back, d, sizeof(int), 0, 0, omp_get_initial_device(), dev);
  printf("device pointer without is_device_ptr: kept=%d d[0]=%d\n", dkept, back);
  if (dkept != 1 || back != 42) errors++;
  omp_target_free(d, dev);

#pragma omp target exit data map(from : p[0:4])
  printf("after exit: p[0]=%d\n", p[0]);
  if (p[0] != 100) errors++;

  free(p);
  free(q);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
