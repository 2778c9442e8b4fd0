// Pointer members of structs (OpenMP 5.2 §5.8.3 pointer attachment): clang 22 maps the struct
// (or the member pointer) and the pointee as ordinary items and joins them with an ATTACH
// entry, clang 19 with PTR_AND_OBJ / MEMBER_OF. The device copy of each pointer must point at
// the device copy of its pointee exactly when both are present, and the host pointer must keep
// its host value when the struct is copied back.
#include <omp.h>
#include <stdio.h>

struct vec {
  int n;
  int *data;
  double *weights;
};
struct holder {
  struct vec *v;
  int tag;
};

static void *device_value(void **host_ptr, int dev) {
  void *value = NULL;
  void *where = omp_get_mapped_ptr(host_ptr, dev);
  if (!where) return (void *)-1;
  omp_target_memcpy(&value, where, sizeof value, 0, 0, omp_get_initial_device(), dev);
  return value;
}

static const char *state(void **host_ptr, void *pointee, int dev) {
  void *v = device_value(host_ptr, dev);
  if (v == (void *)-1) return "pointer not mapped";
  if (pointee && v == omp_get_mapped_ptr(pointee, dev)) return "attached";
  if (v == *host_ptr) return "host value";
  return "other";
}

int main(void) {
  int dev = omp_get_default_device();
  int errors = 0;
  int d[4] = {1, 2, 3, 4};
  double w[2] = {0.5, 0.25};
  struct vec s = {4, d, w};

  /* struct and both pointees in one construct */
#pragma omp target enter data map(to : s) map(to : s.data[0:4], s.weights[0:2])
  printf("enter: data %s, weights %s\n", state((void **)&s.data, d, dev),
         state((void **)&s.weights, w, dev));
  double sum = 0;
#pragma omp target map(present, alloc : s) map(tofrom : sum)
  {
    for (int i = 0; i < s.n; i++) sum += s.data[i] * s.weights[i % 2];
    s.data[0] = 100;
  }
  printf("region through the device struct: sum=%g\n", sum);
  if (sum != 3.5) errors++;
#pragma omp target exit data map(from : s.data[0:4]) map(from : s) map(release : s.weights[0:2])
  printf("exit: d[0]=%d, host pointers kept=%d\n", d[0], s.data == d && s.weights == w);
  if (d[0] != 100 || s.data != d || s.weights != w) errors++;

  /* a pointer to a struct, mapped with a section of its member's pointee */
  struct vec *ps = &s;
  d[1] = 20;
#pragma omp target enter data map(to : ps[0:1])
  printf("struct alone: data %s\n", state((void **)&ps->data, d, dev));
#pragma omp target enter data map(to : ps->data[0:4])
  printf("then ps->data[0:4]: data %s\n", state((void **)&ps->data, d, dev));
  int r = 0;
#pragma omp target map(present, alloc : ps[0:1]) map(from : r)
  r = ps->data[1];
  printf("region reads ps->data[1]=%d\n", r);
  if (r != 20) errors++;
#pragma omp target exit data map(release : ps->data[0:4]) map(release : ps[0:1])
  printf("after exit: struct present=%d data present=%d\n", omp_target_is_present(ps, dev),
         omp_target_is_present(d, dev));

  /* two levels: a holder's struct pointer, and that struct's data pointer */
  struct holder h = {&s, 7};
  struct holder *ph = &h;
  d[2] = 33;
  int r2 = 0;
#pragma omp target map(to : ph[0:1], ph->v[0:1]) map(tofrom : ph->v->data[0:4]) map(from : r2)
  {
    r2 = ph->v->data[2] + ph->tag;
    ph->v->data[3] = 44;
  }
  printf("two levels: r2=%d d[3]=%d\n", r2, d[3]);
  if (r2 != 40 || d[3] != 44) errors++;

  /* a region mapping only a member pointee: the member pointer is mapped implicitly */
  d[0] = 5;
#pragma omp target map(tofrom : s.data[0:4])
  { s.data[0] += 1; }
  printf("member section alone: d[0]=%d\n", d[0]);
  if (d[0] != 6) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return errors != 0;
}
