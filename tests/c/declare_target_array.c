// declare target global arrays (including a to() list form and a
// zero-initialised one), section updates, and per-device copies.
#include <omp.h>
#include <stdio.h>

#define N 16
int table[N];
int lut[4] = {3, 1, 4, 1};
#pragma omp declare target(table)
#pragma omp declare target to(lut)

int main(void) {
  int errors = 0;
  for (int i = 0; i < N; ++i) table[i] = i;

  /* device copy is zero-initialised (static storage), not the host values */
  int first = -1;
#pragma omp target map(from : first)
  { first = table[N - 1]; }
  printf("device table[15] before update=%d\n", first);
  if (first != 0) errors++;

#pragma omp target update to(table)
#pragma omp target
  {
    for (int i = 0; i < N; ++i) table[i] = table[i] * lut[i % 4];
  }
  printf("host table[5] before update from=%d\n", table[5]);
  if (table[5] != 5) errors++;
#pragma omp target update from(table[4:8])
  printf("host table:");
  for (int i = 0; i < N; ++i) printf(" %d", table[i]);
  printf("\n");
  for (int i = 0; i < N; ++i) {
    int expect = (i >= 4 && i < 12) ? i * lut[i % 4] : i;
    if (table[i] != expect) errors++;
  }

  /* each device has its own copy of the global */
  int ndev = omp_get_num_devices();
  if (ndev >= 2) {
    lut[0] = 77;
#pragma omp target update to(lut) device(1)
    int v0 = 0, v1 = 0;
#pragma omp target device(0) map(from : v0)
    { v0 = lut[0]; }
#pragma omp target device(1) map(from : v1)
    { v1 = lut[0]; }
    printf("lut[0] device0=%d device1=%d\n", v0, v1);
    if (v0 != 3 || v1 != 77) errors++;
  }

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
