// Reference counting with nested target data regions: only the outermost
// region's entry copies to the device and only its exit copies back.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int a[4] = {1, 1, 1, 1};

#pragma omp target data map(tofrom : a)
  {
    a[0] = 50; /* host-only change; inner map(to) must not re-copy */
#pragma omp target data map(tofrom : a)
    {
#pragma omp target data map(tofrom : a)
      {
#pragma omp target map(tofrom : a)
        {
          a[1] = a[0] + 1; /* device a[0] is still 1 */
          a[2] = 7;
        }
      }
      printf("after innermost data: host a=%d %d %d %d\n", a[0], a[1], a[2], a[3]);
      if (a[1] != 1 || a[2] != 1) errors++;
    }
    printf("after middle data: host a=%d %d %d %d present=%d\n", a[0], a[1], a[2], a[3],
           omp_target_is_present(a, dev));
    if (a[1] != 1 || !omp_target_is_present(a, dev)) errors++;
  }
  printf("after outer data: host a=%d %d %d %d present=%d\n", a[0], a[1], a[2], a[3],
         omp_target_is_present(a, dev));
  /* outer exit copies device contents, which overwrites host a[0]=50 with 1 */
  if (a[0] != 1 || a[1] != 2 || a[2] != 7 || a[3] != 1) errors++;
  if (omp_target_is_present(a, dev)) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
