// declare target global scalars: the device copy is separate from the host
// copy until 'target update' synchronises them.
#include <omp.h>
#include <stdio.h>

#pragma omp declare target
int g = 5;
double gd = 0.5;
int gs = 3;
int device_func(int x) { return x + g; }
#pragma omp end declare target

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  /* LLVM loads the device image lazily (at the first construct that uses
     the device), so before that the global is not yet present. */
  printf("g present before first region=%d\n", omp_target_is_present(&g, dev));

  int r = 0;
#pragma omp target map(from : r)
  { r = g * 10 + gs; }
  printf("read g on device: r=%d\n", r);
  if (r != 53) errors++;
  printf("g present after first region=%d\n", omp_target_is_present(&g, dev));
  if (!omp_target_is_present(&g, dev)) errors++;

  /* write on device; host copy unchanged */
#pragma omp target
  {
    g = 6;
    gd = 1.5;
    gs = 4;
  }
  printf("host after device write: g=%d gd=%.1f gs=%d\n", g, gd, gs);
  if (g != 5 || gd != 0.5 || gs != 3) errors++;

  /* host write; device copy unchanged until update to */
  g = 100;
#pragma omp target map(from : r)
  { r = device_func(1); }
  printf("device_func(1) before update to: %d\n", r);
  if (r != 7) errors++;
#pragma omp target update to(g)
#pragma omp target map(from : r)
  { r = device_func(1); }
  printf("device_func(1) after update to: %d\n", r);
  if (r != 101) errors++;

  /* update from brings back the device values */
#pragma omp target update from(gd, gs)
  printf("after update from: gd=%.1f gs=%d\n", gd, gs);
  if (gd != 1.5 || gs != 4) errors++;

  /* a map clause on a declare target variable does not create a new copy
     and does not copy (the global is permanently present) */
  g = 200;
#pragma omp target map(tofrom : g)
  { g += 1; }
  printf("map(tofrom:g): host g=%d\n", g);
  int dg = 0;
#pragma omp target map(from : dg)
  { dg = g; }
  printf("device g=%d\n", dg);
  if (dg != 101 || g != 200) errors++;

  /* exit data delete on a declare target global does not remove it */
#pragma omp target exit data map(delete : g)
  printf("g present after delete=%d\n", omp_target_is_present(&g, dev));

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
