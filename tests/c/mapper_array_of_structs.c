// declare mapper on the element type of arrays (OpenMP 5.2 §5.8.8: a mapper applies to each
// element of an array section of that type): a whole array, a section of it, an array reached
// through a pointer, and elements whose mapper maps a nested struct that has its own mapper.
// Each element's pointee travels with it, and every `to` member reaches the device the first
// time the array is mapped. Each part maps a fresh array: LLVM 19 keeps a struct mapped through
// a mapper after its last construct (docs/DIVERGENCES.md 1), so reusing one would compare
// that leak rather than the mapping (divergence_mapper_array_reuse.c shows it).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int n;
  double *v;
} vec_t;

typedef struct {
  int id;
  vec_t pos;
  double mass;
} body_t;

#pragma omp declare mapper(vec_t x) map(x, x.v[0:x.n])
#pragma omp declare mapper(body_t b) map(b.id, b.pos, b.mass)

static vec_t make(int n, double base) {
  vec_t x = {n, malloc(n * sizeof(double))};
  for (int i = 0; i < n; ++i) x.v[i] = base + i;
  return x;
}

int main(void) {
  int errors = 0;
  body_t bodies[4], second[4], third[4];
  body_t *all[3] = {bodies, second, third};
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < 4; ++k) {
      all[a][k].id = 10 + k;
      all[a][k].pos = make(k + 1, 100.0 * k);
      all[a][k].mass = 0.5 * (k + 1);
    }

  /* the whole array, implicitly through the default mapper */
  double sum = 0;
#pragma omp target map(tofrom : sum)
  {
    for (int k = 0; k < 4; ++k) {
      sum += bodies[k].id + bodies[k].mass;
      for (int i = 0; i < bodies[k].pos.n; ++i) sum += bodies[k].pos.v[i];
      bodies[k].pos.v[0] = -k;
    }
  }
  printf("whole array: sum=%.1f v[0] of body 3=%.1f\n", sum, bodies[3].pos.v[0]);
  if (sum != 46 + 5 + 0 + 201 + 603 + 1206 || bodies[3].pos.v[0] != -3) errors++;

  /* a section: only bodies 1 and 2 */
  int ids = 0;
#pragma omp target map(tofrom : second[1:2]) map(tofrom : ids)
  {
    ids = second[1].id * 100 + second[2].id;
    second[2].pos.v[2] = 7.5;
  }
  printf("section: ids=%d body 2 v[2]=%.1f\n", ids, second[2].pos.v[2]);
  if (ids != 1112 || second[2].pos.v[2] != 7.5) errors++;

  /* through a pointer */
  body_t *p = &third[1];
  double m = 0;
#pragma omp target map(to : p[0:3]) map(from : m)
  { m = p[0].mass + p[1].mass + p[2].mass + p[2].pos.v[3]; }
  printf("pointer: m=%.1f\n", m);
  if (m != 1.0 + 1.5 + 2.0 + 303) errors++;

  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < 4; ++k) free(all[a][k].pos.v);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
