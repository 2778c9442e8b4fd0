// Zero-length array sections p[0:0] (OpenMP 5.2 §5.8.3, §5.8.6): on a
// target region the pointer is attached to the device copy when the
// pointee is mapped; when it is not mapped no storage is created and no
// error occurs. On enter/exit data and target update, zero-length sections
// of unmapped data are no-ops; of mapped data they do not change the
// mapping.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int *p = malloc(4 * sizeof(int));
  int *q = malloc(4 * sizeof(int));
  for (int i = 0; i < 4; ++i) p[i] = q[i] = i;
  int *nul = NULL;

  /* mapped pointee: p[0:0] gives the device address */
#pragma omp target enter data map(to : p[0:4])
  void *mp = omp_get_mapped_ptr(p, dev);
  int eq = -1, val = -1;
#pragma omp target map(tofrom : p[0:0]) map(from : eq, val) map(to : mp)
  {
    eq = (p == (int *)mp);
    val = p[3];
    p[3] = 33;
  }
  printf("mapped p[0:0]: equals mapped=%d val=%d host p[3]=%d\n", eq, val, p[3]);
  if (eq != 1 || val != 3 || p[3] != 3) errors++;

  /* zero-length section at an interior offset of a mapped array */
#pragma omp target map(tofrom : p[2:0]) map(from : val)
  { val = p[3]; }
  printf("mapped p[2:0]: val=%d\n", val);
  if (val != 33) errors++;

  /* unmapped NULL pointer: stays NULL, no error */
  int isnull = -1;
#pragma omp target map(tofrom : nul[0:0]) map(from : isnull)
  { isnull = (nul == NULL); }
  printf("NULL nul[0:0]: is_null=%d\n", isnull);
  if (isnull != 1) errors++;

  /* unmapped non-NULL pointee: no storage created */
#pragma omp target map(tofrom : q[0:0])
  {}
  printf("unmapped q[0:0]: q present after=%d\n", omp_target_is_present(q, dev));
  if (omp_target_is_present(q, dev)) errors++;

  /* enter/exit data and update with zero-length sections */
#pragma omp target enter data map(to : q[0:0])
  printf("enter data q[0:0]: q present=%d\n", omp_target_is_present(q, dev));
  if (omp_target_is_present(q, dev)) errors++;
#pragma omp target exit data map(from : q[0:0])
#pragma omp target exit data map(delete : nul[0:0])
#pragma omp target update from(q[0:0])
#pragma omp target update to(nul[0:0])
  printf("exit/update on unmapped zero-length: ok\n");

  /* zero-length enter/exit on mapped data leaves the mapping usable */
#pragma omp target enter data map(to : p[0:0])
#pragma omp target exit data map(release : p[0:0])
  printf("p still present=%d\n", omp_target_is_present(p, dev));
#pragma omp target update from(p[1:0])
  printf("update p[1:0]: host p[3]=%d\n", p[3]);
  if (p[3] != 3) errors++;

#pragma omp target exit data map(from : p[0:4])
  printf("after exit p[0:4]: p[3]=%d present=%d\n", p[3], omp_target_is_present(p, dev));
  if (p[3] != 33 || omp_target_is_present(p, dev)) errors++;

  free(p);
  free(q);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
