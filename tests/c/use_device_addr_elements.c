// use_device_addr and use_device_ptr with parts of mapped data (OpenMP 5.2 §5.4.10, §5.4.11):
// an array element, an array section and a pointer into a mapped block are translated to the
// corresponding device addresses inside `target data`, which a region then uses through
// is_device_ptr; the host addresses are back after the construct.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int a[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  int *p = a + 2;
  int *dev_elem = NULL, *dev_sec = NULL, *dev_p = NULL;
  char *dev_base = NULL;

#pragma omp target data map(tofrom : a)
  {
    dev_base = omp_get_mapped_ptr(a, dev);
#pragma omp target data use_device_addr(a[5])
    { dev_elem = &a[5]; }
#pragma omp target data use_device_addr(a[3:2])
    { dev_sec = &a[3]; }
#pragma omp target data use_device_ptr(p)
    { dev_p = p; }
    printf("element offset=%ld section offset=%ld pointer offset=%ld\n",
           (long)((char *)dev_elem - dev_base), (long)((char *)dev_sec - dev_base),
           (long)((char *)dev_p - dev_base));
    if ((char *)dev_elem - dev_base != 20 || (char *)dev_sec - dev_base != 12 ||
        (char *)dev_p - dev_base != 8)
      errors++;
#pragma omp target is_device_ptr(dev_elem, dev_sec, dev_p)
    {
      *dev_elem += 100;
      dev_sec[1] += 200;
      dev_p[0] += 300;
    }
  }
  printf("after: a[5]=%d a[4]=%d a[2]=%d p kept=%d\n", a[5], a[4], a[2], p == a + 2);
  if (a[5] != 105 || a[4] != 204 || a[2] != 302 || p != a + 2) errors++;
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
