// User-defined mappers (declare mapper): the default mapper of a struct
// with a pointer member maps the pointee; a named mapper maps a subset;
// an array of structs uses the default mapper per element.
// Each construct uses fresh variables (see quirk_mapper_struct.c for the
// LLVM 19 behaviour when a mapped struct is reused).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int len;
  double *data;
} vec_t;

#pragma omp declare mapper(vec_t v) map(v, v.data[0:v.len])
#pragma omp declare mapper(lenonly : vec_t v) map(v.len)

int main(void) {
  int errors = 0;
  vec_t v;
  v.len = 10;
  v.data = malloc(sizeof(double) * v.len);
  for (int i = 0; i < v.len; ++i) v.data[i] = i;

#pragma omp target map(tofrom : v)
  {
    for (int i = 0; i < v.len; ++i) v.data[i] *= 3.0;
  }
  printf("default mapper: data[1]=%.1f data[9]=%.1f\n", v.data[1], v.data[9]);
  if (v.data[1] != 3.0 || v.data[9] != 27.0) errors++;
  printf("pointee present after region: %d\n",
         omp_target_is_present(v.data, omp_get_default_device()));
  if (omp_target_is_present(v.data, omp_get_default_device())) errors++;

  /* named mapper that only maps the length */
  vec_t w;
  w.len = 10;
  w.data = NULL;
  int len_seen = 0;
#pragma omp target map(mapper(lenonly), tofrom : w) map(from : len_seen)
  {
    len_seen = w.len;
    w.len = 4;
  }
  printf("named mapper: len_seen=%d host len=%d\n", len_seen, w.len);
  if (len_seen != 10 || w.len != 4) errors++;

  /* array of structs with the default mapper */
  vec_t arr[3];
  for (int k = 0; k < 3; ++k) {
    arr[k].len = k + 2;
    arr[k].data = calloc(arr[k].len, sizeof(double));
  }
#pragma omp target map(tofrom : arr)
  {
    for (int k = 0; k < 3; ++k)
      for (int i = 0; i < arr[k].len; ++i) arr[k].data[i] = 10 * k + i;
  }
  printf("array of structs: %.0f %.0f %.0f\n", arr[0].data[1], arr[1].data[2], arr[2].data[3]);
  if (arr[0].data[1] != 1 || arr[1].data[2] != 12 || arr[2].data[3] != 23) errors++;

  /* the default mapper is also used by target enter data */
  vec_t e;
  e.len = 5;
  e.data = calloc(e.len, sizeof(double));
#pragma omp target enter data map(to : e)
  printf("enter data: pointee present=%d\n",
         omp_target_is_present(e.data, omp_get_default_device()));
  if (!omp_target_is_present(e.data, omp_get_default_device())) errors++;

  for (int k = 0; k < 3; ++k) free(arr[k].data);
  free(v.data);
  free(e.data);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
