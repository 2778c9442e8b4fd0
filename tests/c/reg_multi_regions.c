// Registration: several distinct target regions (several offload entries
// in one image), executed in a data-dependent order and repeatedly.
#include <omp.h>
#include <stdio.h>

static int region_a(int x) {
  int r = 0;
#pragma omp target map(from : r) map(to : x)
  { r = x + 1; }
  return r;
}

static int region_b(int x) {
  int r = 0;
#pragma omp target map(from : r) map(to : x)
  { r = x * 2; }
  return r;
}

static int region_c(int x) {
  int r = 0;
#pragma omp target map(from : r) map(to : x)
  { r = x - 3; }
  return r;
}

int main(void) {
  int v = 5;
  int errors = 0;
  for (int i = 0; i < 12; ++i) {
    switch (i % 3) {
    case 0: v = region_a(v); break;
    case 1: v = region_b(v); break;
    default: v = region_c(v); break;
    }
    printf("step %d: v=%d\n", i, v);
  }
  /* host reference */
  int h = 5;
  for (int i = 0; i < 12; ++i)
    h = (i % 3 == 0) ? h + 1 : (i % 3 == 1) ? h * 2 : h - 3;
  if (h != v) errors++;

  /* a fourth region inline in main, with a loop inside */
  int sum = 0;
#pragma omp target map(tofrom : sum)
  {
    for (int k = 1; k <= 100; ++k)
      sum += k;
  }
  printf("sum=%d\n", sum);
  if (sum != 5050) errors++;
  printf("%s\n", errors == 0 ? "PASS" : "FAIL");
  return 0;
}
