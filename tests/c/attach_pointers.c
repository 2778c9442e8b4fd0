// HOST-ONLY: its kernels read host memory through unmapped pointers, which only the host device's shared address space allows
// Pointers to pointers, zero-length sections and implicitly mapped pointers, as clang 22
// expresses them with ATTACH entries (clang 19 with PTR_AND_OBJ): which device pointers end up
// attached, what a kernel receives, and that nothing stays mapped.
#include <omp.h>
#include <stdio.h>

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
  int row0[3] = {1, 2, 3}, row1[3] = {4, 5, 6};
  int *rows[2] = {row0, row1};
  int **pp = rows;

  /* pointer array and one row's section: the row pointer pp[1] is attached */
#pragma omp target enter data map(to : pp[0:2]) map(to : pp[1][0:3])
  printf("pp[0:2] + pp[1][0:3]: rows[1] %s, rows[0] %s\n", state((void **)&rows[1], row1, dev),
         state((void **)&rows[0], row0, dev));
  int r = 0;
#pragma omp target map(present, alloc : pp[0:2]) map(present, alloc : pp[1][0:3]) map(from : r)
  {
    r = pp[1][2];
    pp[1][0] = 40;
  }
#pragma omp target exit data map(from : pp[1][0:3]) map(release : pp[0:2])
  printf("kernel read pp[1][2]=%d, row1[0]=%d, rows intact=%d\n", r, row1[0],
         rows[0] == row0 && rows[1] == row1);
  if (r != 6 || row1[0] != 40 || rows[1] != row1) errors++;
  printf("after exit: rows present=%d row1 present=%d\n", omp_target_is_present(rows, dev),
         omp_target_is_present(row1, dev));

  /* a section of the pointee of a pointer that is not mapped: nothing to attach, the kernel's
     copy of pp[0] is the host value and the section is used through it */
  int r2 = 0;
#pragma omp target map(tofrom : pp[0][0:3]) map(from : r2)
  r2 = pp[0][1];
  printf("unmapped pointer array: kernel read pp[0][1]=%d\n", r2);
  if (r2 != 2) errors++;

  /* zero-length sections: the pointee is found when mapped, the pointer keeps its value when
     not (OpenMP 5.2 §5.8.6) */
  int *p = row0;
  int z1 = -1, z2 = -1;
#pragma omp target enter data map(to : row0)
#pragma omp target map(to : p[0:0]) map(from : z1)
  z1 = p[2];
#pragma omp target exit data map(release : row0)
#pragma omp target map(to : p[0:0]) map(from : z2)
  z2 = (p == row0);
  printf("zero-length: mapped pointee read %d, unmapped keeps the host pointer %d\n", z1, z2);
  if (z1 != 3 || z2 != 1) errors++;

  /* implicit pointers: p used in a region without a map clause */
  int z3 = -1;
#pragma omp target enter data map(to : row1)
#pragma omp target map(from : z3)
  {
    z3 = p[0] + row1[2];
  }
#pragma omp target exit data map(release : row1)
  printf("implicit pointer: %d\n", z3);
  if (z3 != 7) errors++;

  /* a struct holding a pointer to pointers */
  struct { int n; int **rows; } m = {2, rows};
#pragma omp target enter data map(to : m) map(to : m.rows[0:2]) map(to : m.rows[0][0:3])
  printf("m.rows %s, rows[0] %s\n", state((void **)&m.rows, rows, dev),
         state((void **)&rows[0], row0, dev));
  int r3 = 0;
#pragma omp target map(present, alloc : m) map(from : r3)
  r3 = m.rows[0][0] + m.n;
#pragma omp target exit data map(release : m.rows[0][0:3]) map(release : m.rows[0:2]) map(release : m)
  printf("through m.rows: %d; left mapped: %d %d %d\n", r3, omp_target_is_present(&m, dev),
         omp_target_is_present(rows, dev), omp_target_is_present(row0, dev));
  if (r3 != 3) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return errors != 0;
}
