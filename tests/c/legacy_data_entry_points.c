// The data entry points clang <= 18 emitted, called directly: __tgt_target_data_begin/end/
// update (no mapper), their _nowait forms, the _mapper forms with null names and mappers,
// and __kmpc_push_target_tripcount_mapper. They must behave as the pragmas do.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

void __tgt_target_data_begin(int64_t dev, int32_t n, void **bases, void **begins, int64_t *sizes, int64_t *types);
void __tgt_target_data_end(int64_t dev, int32_t n, void **bases, void **begins, int64_t *sizes, int64_t *types);
void __tgt_target_data_update(int64_t dev, int32_t n, void **bases, void **begins, int64_t *sizes, int64_t *types);
void __tgt_target_data_begin_nowait(int64_t dev, int32_t n, void **bases, void **begins, int64_t *sizes,
                                    int64_t *types, int32_t depn, void *deps, int32_t noaliasn, void *noalias);
void __tgt_target_data_end_nowait(int64_t dev, int32_t n, void **bases, void **begins, int64_t *sizes,
                                  int64_t *types, int32_t depn, void *deps, int32_t noaliasn, void *noalias);
void __tgt_target_data_update_mapper(void *loc, int64_t dev, int32_t n, void **bases, void **begins,
                                     int64_t *sizes, int64_t *types, void **names, void **mappers);
void __kmpc_push_target_tripcount_mapper(void *loc, int64_t dev, uint64_t tripcount);

enum { TO = 1, FROM = 2, ALWAYS = 4, DELETE = 8 };

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int a[8];
  for (int i = 0; i < 8; ++i) a[i] = i;
  void *bases[1] = {a}, *begins[1] = {a};
  int64_t sizes[1] = {sizeof a};
  int64_t to[1] = {TO}, from[1] = {FROM}, del[1] = {DELETE}, always_to[1] = {ALWAYS | TO};

  __tgt_target_data_begin(dev, 1, bases, begins, sizes, to);
  printf("present after begin: %d\n", omp_target_is_present(a, dev));
  errors += !omp_target_is_present(a, dev);

  /* a region on the mapping made by the legacy call */
#pragma omp target map(tofrom : a)
  for (int i = 0; i < 8; ++i) a[i] *= 10;
  printf("host a[3] while mapped (not copied back yet): %d\n", a[3]);
  errors += a[3] != 3;

  __tgt_target_data_update_mapper(NULL, dev, 1, bases, begins, sizes, from, NULL, NULL);
  printf("a[3] after update_mapper from: %d\n", a[3]);
  errors += a[3] != 30;

  a[5] = -5;
  __tgt_target_data_update(dev, 1, bases, begins, sizes, to);
#pragma omp target map(tofrom : a)
  a[5] -= 1;
  __tgt_target_data_update(dev, 1, bases, begins, sizes, from);
  printf("a[5] after update to/region/update from: %d\n", a[5]);
  errors += a[5] != -6;

  /* a second reference through the nowait form (outside a task: completes at once) */
  __tgt_target_data_begin_nowait(dev, 1, bases, begins, sizes, always_to, 0, NULL, 0, NULL);
  __tgt_target_data_end(dev, 1, bases, begins, sizes, from);
  printf("present after one of two ends: %d\n", omp_target_is_present(a, dev));
  errors += !omp_target_is_present(a, dev);

  __kmpc_push_target_tripcount_mapper(NULL, dev, 8);
#pragma omp target teams distribute parallel for map(tofrom : a) num_teams(1) thread_limit(2)
  for (int i = 0; i < 8; ++i) a[i] += 1;

  __tgt_target_data_end_nowait(dev, 1, bases, begins, sizes, from, 0, NULL, 0, NULL);
  printf("present after the last end: %d\n", omp_target_is_present(a, dev));
  errors += omp_target_is_present(a, dev);
  printf("a:");
  for (int i = 0; i < 8; ++i) printf(" %d", a[i]);
  printf("\n");

  /* delete drops every reference at once */
  __tgt_target_data_begin(dev, 1, bases, begins, sizes, to);
  __tgt_target_data_begin(dev, 1, bases, begins, sizes, to);
  __tgt_target_data_end(dev, 1, bases, begins, sizes, del);
  printf("present after delete: %d\n", omp_target_is_present(a, dev));
  errors += omp_target_is_present(a, dev);

  printf("%s (errors=%d)\n", errors ? "FAIL" : "PASS", errors);
  return 0;
}
