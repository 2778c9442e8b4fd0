// LLVM allocation extensions llvm_omp_target_alloc_host / _shared /
// _device with their matching frees: memory written by target regions
// through is_device_ptr and checked with omp_target_memcpy.
#include <omp.h>
#include <stdio.h>
#include <stddef.h>

void *llvm_omp_target_alloc_host(size_t, int);
void *llvm_omp_target_alloc_shared(size_t, int);
void *llvm_omp_target_alloc_device(size_t, int);
void llvm_omp_target_free_host(void *, int);
void llvm_omp_target_free_shared(void *, int);
void llvm_omp_target_free_device(void *, int);

static int fill_and_check(const char *name, int *p, int dev, int base) {
  int host = omp_get_initial_device();
#pragma omp target is_device_ptr(p) device(dev)
  {
    for (int i = 0; i < 16; ++i) p[i] = base + i * i;
  }
  int chk[16] = {0};
  int rc = omp_target_memcpy(chk, p, sizeof(chk), 0, 0, host, dev);
  int ok = (rc == 0);
  for (int i = 0; i < 16; ++i) ok &= (chk[i] == base + i * i);
  /* host -> device write, read back on the device */
  int v = -7, got = 0;
  rc = omp_target_memcpy(p, &v, sizeof(int), 5 * sizeof(int), 0, dev, host);
#pragma omp target is_device_ptr(p) device(dev) map(from : got)
  { got = p[5]; }
  ok &= (rc == 0 && got == -7);
  printf("%s: non-null=%d values ok=%d p[15]=%d\n", name, p != NULL, ok, chk[15]);
  return ok;
}

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();

  int *h = llvm_omp_target_alloc_host(16 * sizeof(int), dev);
  int *s = llvm_omp_target_alloc_shared(16 * sizeof(int), dev);
  int *d = llvm_omp_target_alloc_device(16 * sizeof(int), dev);
  if (!h || !s || !d) errors++;
  if (h && !fill_and_check("host", h, dev, 1000)) errors++;
  if (s && !fill_and_check("shared", s, dev, 2000)) errors++;
  if (d && !fill_and_check("device", d, dev, 3000)) errors++;

  /* allocated memory is not 'present' (not a host address in the table) */
  printf("device alloc present=%d\n", omp_target_is_present(d, dev));

  /* zero-size requests */
  printf("zero-size device alloc null=%d\n", llvm_omp_target_alloc_device(0, dev) == NULL);

  llvm_omp_target_free_host(h, dev);
  llvm_omp_target_free_shared(s, dev);
  llvm_omp_target_free_device(d, dev);
  llvm_omp_target_free_device(NULL, dev); /* no-op */
  printf("freed\n");

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
