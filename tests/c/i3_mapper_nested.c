// DIVERGENCE: with a declare mapper on a struct that is already present, LLVM 19 still copies the mapper's member components (to at entry, back at exit) on a target region, overwriting the attached device pointer with the host one, although §5.8.3 forbids copies for present data with a nonzero reference count
// declare mapper for a struct that contains another struct which has its
// own mapper: the outer mapper's map(o.in) uses the inner struct's default
// mapper (which maps the inner pointee). Used on target enter data, target
// update to/from and target exit data, and on a target region.
// No pointer member in the outer struct itself; the inner struct is an
// embedded member.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct In {
  int len;
  int *data;
};
struct Out {
  int id;
  struct In in;
  int extra[3];
};

#pragma omp declare mapper(struct In v) map(v, v.data[0:v.len])
#pragma omp declare mapper(struct Out o) map(o.id, o.in, o.extra)

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int n = 5;
  int *d = malloc(n * sizeof(int));
  for (int i = 0; i < n; ++i) d[i] = i + 1;
  struct Out o = {42, {n, d}, {7, 8, 9}};

#pragma omp target enter data map(to : o)
  printf("enter: data present=%d\n", omp_target_is_present(d, dev));
  if (!omp_target_is_present(d, dev)) errors++;

  int sum = 0;
#pragma omp target map(tofrom : sum)
  {
    for (int i = 0; i < o.in.len; ++i) sum += o.in.data[i];
    sum += o.id + o.extra[2];
    for (int i = 0; i < o.in.len; ++i) o.in.data[i] *= 10;
    o.extra[0] = -7;
  }
  printf("device sum=%d\n", sum);
  if (sum != 15 + 42 + 9) errors++;

  printf("host before update: d[0]=%d extra[0]=%d\n", d[0], o.extra[0]);
  if (d[0] != 1 || o.extra[0] != 7) errors++;
#pragma omp target update from(o)
  printf("after update from(o): d=%d %d %d %d %d extra[0]=%d data kept=%d\n", d[0], d[1], d[2],
         d[3], d[4], o.extra[0], o.in.data == d);
  if (d[4] != 50 || o.extra[0] != -7 || o.in.data != d) errors++;

  /* host changes pushed with update to */
  for (int i = 0; i < n; ++i) d[i] = 100 + i;
  o.id = 1;
#pragma omp target update to(o)
  int first = 0, id = 0;
#pragma omp target map(from : first, id)
  {
    first = o.in.data[0] + o.in.data[4];
    id = o.id;
  }
  printf("after update to(o): device first+last=%d id=%d\n", first, id);
  if (first != 204 || id != 1) errors++;

#pragma omp target
  { o.in.data[2] = -1; }
#pragma omp target exit data map(from : o)
  printf("exit: d[2]=%d data present=%d data kept=%d\n", d[2], omp_target_is_present(d, dev),
         o.in.data == d);
  if (d[2] != -1 || o.in.data != d) errors++;

  free(d);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
