/* The body shared by abi_mixed_clang19_lib.c and abi_mixed_clang22_lib.c: a program and a
   library of the other compiler share one runtime, one device table. */
#include <omp.h>
#include <stdio.h>

struct vec {
  int n;
  int *data;
};
int lib_sum_present(int *a, int n);
int lib_read_attached(struct vec *v, int i, int *attached);
void lib_enter_vec(struct vec *v);
void lib_exit_vec(struct vec *v);
int lib_num_devices(void);
int lib_bump_counter(void);
extern int lib_counter;

int main(void) {
  int errors = 0;
  printf("devices: program %d, library %d\n", omp_get_num_devices(), lib_num_devices());
  if (omp_get_num_devices() != lib_num_devices()) errors++;

  int a[8];
  for (int i = 0; i < 8; i++) a[i] = i + 1;
#pragma omp target enter data map(to : a[0:8])
  printf("library region on the program's mapping: sum=%d\n", lib_sum_present(a, 8));
  if (lib_sum_present(a, 8) != 36) errors++;
#pragma omp target exit data map(release : a[0:8])

  /* The program maps and attaches; the library reads through the attached pointer. */
  int d1[4] = {10, 11, 12, 13};
  struct vec v1 = {4, d1};
#pragma omp target enter data map(to : v1) map(to : v1.data[0:4])
  int attached1 = 0;
  int r1 = lib_read_attached(&v1, 2, &attached1);
  printf("library reads the program's attached pointer: %d (attached %d)\n", r1, attached1);
  if (r1 != 12 || !attached1) errors++;
#pragma omp target exit data map(release : v1.data[0:4]) map(release : v1)

  /* The library maps and attaches; the program reads and writes through it. */
  int d2[4] = {20, 21, 22, 23};
  struct vec v2 = {4, d2};
  struct vec *pv2 = &v2;
  lib_enter_vec(pv2);
  int r2 = -1, attached2 = 0;
  void *mapped2 = omp_get_mapped_ptr(d2, omp_get_default_device());
#pragma omp target map(present, alloc : pv2[0:1]) map(from : r2, attached2)
  {
    r2 = pv2->data[3];
    pv2->data[0] = 99;
    attached2 = (void *)pv2->data == mapped2;
  }
  printf("program reads the library's attached pointer: %d (attached %d)\n", r2, attached2);
  if (r2 != 23 || !attached2) errors++;
  lib_exit_vec(pv2);
  printf("after the library's exit: d2[0]=%d, v2.data intact=%d\n", d2[0], v2.data == d2);
  if (d2[0] != 99 || v2.data != d2) errors++;

  /* The library's declare target global, updated from the program. */
  lib_counter = 500;
#pragma omp target update to(lib_counter)
  int c = lib_bump_counter();
  printf("library global after the program's update: %d\n", c);
  if (c != 501) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return errors != 0;
}
