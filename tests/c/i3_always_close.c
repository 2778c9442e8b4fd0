// The always and close map-type modifiers in combination (OpenMP 5.2
// §5.8.3): always forces the copy regardless of the reference count,
// close is only a hint and changes nothing observable, also on a mapping
// that is already present.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int a[4] = {1, 2, 3, 4};

  /* 1. close alone on a new mapping: normal tofrom */
#pragma omp target map(close, tofrom : a)
  { a[0] += 10; }
  printf("1: a[0]=%d present=%d\n", a[0], omp_target_is_present(a, dev));
  if (a[0] != 11 || omp_target_is_present(a, dev)) errors++;

  /* 2. always, close on a new mapping */
#pragma omp target map(always, close, tofrom : a)
  { a[1] += 20; }
  printf("2: a[1]=%d\n", a[1]);
  if (a[1] != 22) errors++;

  /* 3. close on a present mapping: no copies */
#pragma omp target enter data map(to : a)
  a[2] = 300; /* host only */
#pragma omp target map(close, tofrom : a)
  { a[3] = a[2]; }
  printf("3: a[2]=%d a[3]=%d (no copies)\n", a[2], a[3]);
  if (a[2] != 300 || a[3] != 4) errors++;

  /* 4. always, close on a present mapping: copies both ways */
#pragma omp target map(always, close, tofrom : a)
  { a[3] = a[2] + 1; }
  printf("4: a[3]=%d still present=%d\n", a[3], omp_target_is_present(a, dev));
  if (a[3] != 301 || !omp_target_is_present(a, dev)) errors++;

  /* 5. close, to / always, close, from on present data */
  a[0] = -1;
#pragma omp target map(close, to : a) map(tofrom : errors)
  { if (a[0] != 11) errors += 100; } /* device still has 11 */
#pragma omp target map(always, close, from : a)
  { a[0] = 55; }
  printf("5: a[0]=%d\n", a[0]);
  if (a[0] != 55) errors++;

  /* 6. enter/exit data with close and always */
#pragma omp target enter data map(always, close, to : a) /* count 2, copies */
  a[1] = 0;
#pragma omp target exit data map(close, from : a) /* count 1, no copy */
  printf("6: a[1]=%d present=%d\n", a[1], omp_target_is_present(a, dev));
  if (a[1] != 0) errors++;
#pragma omp target exit data map(always, close, from : a) /* copy and remove */
  printf("6: a[1]=%d present=%d\n", a[1], omp_target_is_present(a, dev));
  if (a[1] != 22 || omp_target_is_present(a, dev)) errors++;

  /* 7. target data with close */
#pragma omp target data map(close, tofrom : a)
  {
#pragma omp target map(tofrom : a)
    { a[2] = 7; }
    printf("7: inside a[2]=%d\n", a[2]);
  }
  printf("7: after a[2]=%d\n", a[2]);
  if (a[2] != 7) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
