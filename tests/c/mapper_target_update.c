// target update through mappers (OpenMP 5.2 §5.9: a motion clause uses the list item's
// mapper, the default one or a named one given with the mapper modifier): `to` and `from`
// move exactly what the mapper maps, pointees included, and keep attached device pointers;
// a named mapper moves only its members; `present` on a motion clause of present data is
// satisfied. The regions reach the device copy through is_device_ptr (omp_get_mapped_ptr), so
// that no map clause touches the struct between the updates (LLVM 19 would copy a present
// struct's mapper members again there: divergence_mapper_array_reuse.c).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int n;
  double *x;
  double scale;
} field_t;

#pragma omp declare mapper(field_t f) map(f, f.x[0:f.n])
#pragma omp declare mapper(scaleonly : field_t f) map(f.scale)

int main(void) {
  int errors = 0;
  field_t f = {4, malloc(4 * sizeof(double)), 1.0};
  for (int i = 0; i < 4; ++i) f.x[i] = i;
  double *host_x = f.x;
#pragma omp target enter data map(to : f)
  field_t *fd = omp_get_mapped_ptr(&f, omp_get_default_device());

  for (int i = 0; i < 4; ++i) f.x[i] = 10 * i;
  f.scale = 2.0;
#pragma omp target update to(f)
  double s = 0;
  /* tofrom: the region adds to s (a map(from) copy would start uninitialised) */
#pragma omp target is_device_ptr(fd) map(tofrom : s)
  {
    for (int i = 0; i < fd->n; ++i) s += fd->scale * fd->x[i];
    fd->x[3] = -1;
    fd->scale = 5.0;
  }
  printf("update to: s=%.1f\n", s);
  if (s != 120) errors++;

#pragma omp target update from(present : f)
  printf("update from: x[3]=%.1f scale=%.1f host pointer kept=%d\n", f.x[3], f.scale,
         f.x == host_x);
  if (f.x[3] != -1 || f.scale != 5.0 || f.x != host_x) errors++;

  /* a named mapper moves only the scale */
  f.scale = 7.0;
  f.x[0] = 99;
#pragma omp target update to(mapper(scaleonly) : f)
#pragma omp target is_device_ptr(fd) map(from : s)
  { s = fd->scale + fd->x[0]; }
  printf("named mapper: s=%.1f\n", s);
  if (s != 7.0) errors++;

#pragma omp target exit data map(release : f)
  free(host_x);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
