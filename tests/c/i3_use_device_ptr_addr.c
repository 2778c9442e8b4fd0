// use_device_ptr and use_device_addr on target data (OpenMP 5.2 §5.4.9,
// §5.4.10): inside the region the list items refer to device addresses,
// which are passed to target regions through is_device_ptr and
// has_device_addr, and to omp_target_memcpy.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  int n = 8;
  int *p = malloc(n * sizeof(int));
  int arr[8];
  for (int i = 0; i < n; ++i) p[i] = arr[i] = i;
  int *hp = p;

#pragma omp target data map(tofrom : p[0:n], arr)
  {
    void *mp = omp_get_mapped_ptr(hp, dev);
    void *ma = omp_get_mapped_ptr(arr, dev);
#pragma omp target data use_device_ptr(p) use_device_addr(arr)
    {
      printf("use_device_ptr == mapped: %d\n", (void *)p == mp);
      printf("use_device_addr == mapped: %d\n", (void *)&arr[0] == ma);
      if ((void *)p != mp || (void *)arr != ma) errors++;

      /* device pointer through is_device_ptr */
#pragma omp target is_device_ptr(p)
      {
        for (int i = 0; i < 8; ++i) p[i] += 100;
      }
      /* device address through has_device_addr */
#pragma omp target has_device_addr(arr)
      {
        for (int i = 0; i < 8; ++i) arr[i] *= 3;
      }
      /* device memory read with omp_target_memcpy */
      int tmp[2] = {0, 0};
      int r1 = omp_target_memcpy(tmp, p, sizeof(int), 0, 7 * sizeof(int), host, dev);
      int r2 = omp_target_memcpy(tmp + 1, arr, sizeof(int), 0, 7 * sizeof(int), host, dev);
      printf("memcpy rc=%d %d device p[7]=%d arr[7]=%d\n", r1, r2, tmp[0], tmp[1]);
      if (tmp[0] != 107 || tmp[1] != 21) errors++;
    }
    printf("after inner data: p restored=%d host p[0]=%d arr[0]=%d\n", p == hp, p[0], arr[1]);
    if (p != hp || p[0] != 0 || arr[1] != 1) errors++;
  }
  printf("after outer data: p[0]=%d p[7]=%d arr[1]=%d arr[7]=%d\n", p[0], p[7], arr[1], arr[7]);
  if (p[0] != 100 || p[7] != 107 || arr[1] != 3 || arr[7] != 21) errors++;

  /* use_device_addr on a section; pointer arithmetic on the device address */
#pragma omp target enter data map(to : arr)
#pragma omp target data use_device_addr(arr[2:4])
  {
    int *d2 = &arr[2];
    int got = 0;
#pragma omp target is_device_ptr(d2) map(from : got)
    { got = d2[0] + d2[3]; }
    printf("section use_device_addr: arr[2]+arr[5]=%d\n", got);
    if (got != 6 + 15) errors++;
  }
#pragma omp target exit data map(delete : arr)

  /* use_device_ptr on a pointer into the middle of a mapped block */
  int *mid = p + 4;
#pragma omp target data map(to : p[0:n]) use_device_ptr(mid)
  {
    int got = 0;
#pragma omp target is_device_ptr(mid) map(from : got)
    { got = mid[-4] + mid[0]; }
    printf("interior use_device_ptr: p[0]+p[4]=%d\n", got);
    if (got != 100 + 104) errors++;
  }

  free(p);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
