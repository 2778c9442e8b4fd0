// STDERR
// omp_target_is_present before/after mapping and on the initial device;
// omp_target_associate_ptr / omp_target_disassociate_ptr; omp_get_mapped_ptr.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int dev = 0;
  int host = omp_get_initial_device();
  int a[8] = {0, 1, 2, 3, 4, 5, 6, 7};

  printf("before map: %d\n", omp_target_is_present(a, dev));
  if (omp_target_is_present(a, dev)) errors++;
  printf("initial device always present: %d\n", omp_target_is_present(a, host));
  if (omp_target_is_present(a, host) != 1) errors++;
  printf("NULL on device 0: %d\n", omp_target_is_present(NULL, dev));

#pragma omp target data map(to : a)
  {
    printf("inside data: a=%d a+7=%d\n", omp_target_is_present(a, dev),
           omp_target_is_present(a + 7, dev));
    if (!omp_target_is_present(a, dev) || !omp_target_is_present(a + 7, dev)) errors++;
    printf("other device: %d\n", omp_target_is_present(a, 1));
    if (omp_target_is_present(a, 1)) errors++;
    printf("mapped ptr non-null: %d\n", omp_get_mapped_ptr(a, dev) != NULL);
    printf("mapped ptr of a+2 == mapped(a)+2: %d\n",
           (int *)omp_get_mapped_ptr(a + 2, dev) == (int *)omp_get_mapped_ptr(a, dev) + 2);
  }
  printf("after data: %d\n", omp_target_is_present(a, dev));
  if (omp_target_is_present(a, dev)) errors++;
  printf("mapped ptr after unmap is NULL: %d\n", omp_get_mapped_ptr(a, dev) == NULL);
  printf("mapped ptr on initial device is the host ptr: %d\n",
         omp_get_mapped_ptr(a, host) == (void *)a);

  /* associate a host buffer with device memory from omp_target_alloc */
  int h[4] = {1, 2, 3, 4};
  int *d = omp_target_alloc(sizeof h, dev);
  omp_target_memcpy(d, h, sizeof h, 0, 0, dev, host);
  int rc = omp_target_associate_ptr(h, d, sizeof h, 0, dev);
  printf("associate rc=%d present=%d\n", rc, omp_target_is_present(h, dev));
  if (rc != 0 || !omp_target_is_present(h, dev)) errors++;
  /* a target region that maps h uses the associated storage: no copies */
  h[0] = 100;
#pragma omp target map(tofrom : h) device(dev)
  { h[1] = h[0] * 10; } /* device h[0] is 1 */
  printf("host h after region: %d %d (associated: no copy back)\n", h[0], h[1]);
  if (h[0] != 100 || h[1] != 2) errors++;
  int back[4];
  omp_target_memcpy(back, d, sizeof back, 0, 0, host, dev);
  printf("device storage: %d %d %d %d\n", back[0], back[1], back[2], back[3]);
  if (back[1] != 10) errors++;
  rc = omp_target_disassociate_ptr(h, dev);
  printf("disassociate rc=%d present=%d\n", rc, omp_target_is_present(h, dev));
  if (rc != 0 || omp_target_is_present(h, dev)) errors++;
  /* disassociating again fails */
  rc = omp_target_disassociate_ptr(h, dev);
  printf("second disassociate rc=%d\n", rc); /* LLVM prints an error too */
  fflush(stdout);
  if (rc == 0) errors++;
  omp_target_free(d, dev);

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
