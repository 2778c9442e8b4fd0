// STDERR
// omp_target_associate_ptr (OpenMP 5.2 §18.8.9): the associated host range
// is present; target regions mapping it use the associated device storage
// and never copy. An ompx_hold map on the associated range, then
// omp_target_disassociate_ptr while the hold region is active and after.
// Only return codes and values are printed.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  int a[8];
  for (int i = 0; i < 8; ++i) a[i] = i;
  int *d = omp_target_alloc(sizeof(a), dev);
  int init[8] = {50, 51, 52, 53, 54, 55, 56, 57};
  omp_target_memcpy(d, init, sizeof(init), 0, 0, dev, host);

  int r = omp_target_associate_ptr(a, d, sizeof(a), 0, dev);
  printf("associate rc=%d present=%d mapped==d %d\n", r, omp_target_is_present(a, dev),
         omp_get_mapped_ptr(a, dev) == (void *)d);
  if (r != 0 || omp_get_mapped_ptr(a, dev) != (void *)d) errors++;

  /* tofrom on the associated range: no copy in, no copy out */
  int seen = 0;
#pragma omp target map(tofrom : a) map(from : seen)
  {
    seen = a[1];
    a[2] = 1000;
  }
  printf("region: device a[1]=%d host a[2]=%d\n", seen, a[2]);
  if (seen != 51 || a[2] != 2) errors++;

  int chk[8];
  omp_target_memcpy(chk, d, sizeof(chk), 0, 0, host, dev);
  printf("device storage a[2]=%d\n", chk[2]);
  if (chk[2] != 1000) errors++;

  /* exit data delete on an associated range does not remove it */
#pragma omp target exit data map(delete : a)
  printf("after exit data delete: present=%d\n", omp_target_is_present(a, dev));

  /* ompx_hold on the associated pointer */
  int rd_held = -2;
#pragma omp target data map(ompx_hold, tofrom : a)
  {
#pragma omp target map(tofrom : a)
    { a[3] = 3000; }
    rd_held = omp_target_disassociate_ptr(a, dev);
  }
  printf("disassociate while held rc=%d\n", rd_held);
  int rd_after = omp_target_disassociate_ptr(a, dev);
  printf("disassociate after rc=%d present=%d\n", rd_after, omp_target_is_present(a, dev));

  omp_target_memcpy(chk, d, sizeof(chk), 0, 0, host, dev);
  printf("host a[3]=%d device a[3]=%d\n", a[3], chk[3]);

  /* after disassociation a normal mapping allocates and copies again */
#pragma omp target map(tofrom : a) map(from : seen)
  { seen = a[1]; a[1] = -1; }
  printf("fresh map: device a[1]=%d host a[1]=%d\n", seen, a[1]);
  if (seen != 1 || a[1] != -1) errors++;

  omp_target_free(d, dev);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
