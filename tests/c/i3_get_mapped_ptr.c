// STDERR
// omp_get_mapped_ptr (OpenMP 5.2 §18.8.11): device address of a mapped
// host pointer, NULL when not mapped, interior pointers keep their offset,
// NULL again after unmapping, the pointer itself for the initial device.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  double a[10];
  double *p = malloc(6 * sizeof(double));
  int unm = 0;

  printf("unmapped: null=%d\n", omp_get_mapped_ptr(a, dev) == NULL);
  if (omp_get_mapped_ptr(a, dev) != NULL) errors++;
  printf("initial device: same=%d %d\n", omp_get_mapped_ptr(a, host) == (void *)a,
         omp_get_mapped_ptr(&unm, host) == (void *)&unm);
  if (omp_get_mapped_ptr(a, host) != (void *)a) errors++;
  printf("NULL pointer: null=%d\n", omp_get_mapped_ptr(NULL, dev) == NULL);

#pragma omp target enter data map(to : a, p[2:3])
  char *ma = omp_get_mapped_ptr(a, dev);
  char *ma5 = omp_get_mapped_ptr(&a[5], dev);
  char *mp2 = omp_get_mapped_ptr(&p[2], dev);
  char *mp4 = omp_get_mapped_ptr(&p[4], dev);
  printf("mapped: a=%d interior offset=%ld p[2]=%d p[4]-p[2]=%ld\n", ma != NULL, (long)(ma5 - ma),
         mp2 != NULL, (long)(mp4 - mp2));
  if (!ma || ma5 - ma != 5 * (long)sizeof(double) || !mp2 || mp4 - mp2 != 2 * (long)sizeof(double))
    errors++;
  printf("outside section: p[0] null=%d p[5] null=%d a+10 null=%d\n",
         omp_get_mapped_ptr(&p[0], dev) == NULL, omp_get_mapped_ptr(&p[5], dev) == NULL,
         omp_get_mapped_ptr(&a[10], dev) == NULL);
  if (omp_get_mapped_ptr(&p[0], dev) || omp_get_mapped_ptr(&p[5], dev)) errors++;

  /* the mapped address is the one the device uses */
  int same = -1;
#pragma omp target map(from : same) map(to : ma)
  { same = ((char *)&a[0] == ma); }
  printf("region sees mapped address: %d\n", same);
  if (same != 1) errors++;

  /* usable with omp_target_memcpy */
  double v = 0;
  a[7] = 7.5;
#pragma omp target update to(a[7:1])
  omp_target_memcpy(&v, ma, sizeof(double), 0, 7 * sizeof(double), host, dev);
  printf("memcpy through mapped ptr: %.1f\n", v);
  if (v != 7.5) errors++;

  /* unchanged by an extra reference, NULL after the last one */
#pragma omp target enter data map(to : a)
  printf("second ref same=%d\n", omp_get_mapped_ptr(a, dev) == (void *)ma);
#pragma omp target exit data map(release : a)
  printf("after one release non-null=%d\n", omp_get_mapped_ptr(a, dev) != NULL);
#pragma omp target exit data map(release : a, p[2:3])
  printf("after unmapping: a null=%d p null=%d\n", omp_get_mapped_ptr(a, dev) == NULL,
         omp_get_mapped_ptr(&p[2], dev) == NULL);
  if (omp_get_mapped_ptr(a, dev) || omp_get_mapped_ptr(&p[2], dev)) errors++;

  free(p);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
