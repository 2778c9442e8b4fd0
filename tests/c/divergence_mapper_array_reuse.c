// DIVERGENCE(clang19): an array of structs entered through its default mapper (target enter data) is present: a later target region that maps it again must not copy its members over the device copy (OpenMP 5.2 §5.8.3), but LLVM 19 copies the mapper's member components again (it never counted the struct's own component), replacing the attached device pointers with host ones, so the region's writes bypass the device copy and target exit data map(from) copies the old device data back over them
// An array of structs with a pointer member, entered with `target enter data map(to: ...)`
// through the element type's default mapper, updated on the device by a region, and brought
// back with `target exit data map(from: ...)` (the same root as i3_mapper_nested.c, for arrays).
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
} body_t;

#pragma omp declare mapper(vec_t x) map(x, x.v[0:x.n])
#pragma omp declare mapper(body_t b) map(b.id, b.pos)

int main(void) {
  body_t bodies[3];
  for (int k = 0; k < 3; ++k) {
    bodies[k].id = k;
    bodies[k].pos.n = k + 1;
    bodies[k].pos.v = malloc((k + 1) * sizeof(double));
    for (int i = 0; i <= k; ++i) bodies[k].pos.v[i] = 10 * k + i;
  }
#pragma omp target enter data map(to : bodies)
#pragma omp target
  {
    for (int k = 0; k < 3; ++k) bodies[k].pos.v[k] += 1000;
  }
  printf("host before exit: body 2 v[2]=%.0f\n", bodies[2].pos.v[2]);
#pragma omp target exit data map(from : bodies)
  printf("after exit: body 0 v[0]=%.0f body 2 v[2]=%.0f\n", bodies[0].pos.v[0],
         bodies[2].pos.v[2]);
  int ok = bodies[0].pos.v[0] == 1000 && bodies[2].pos.v[2] == 1022;
  for (int k = 0; k < 3; ++k) free(bodies[k].pos.v);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return 0;
}
