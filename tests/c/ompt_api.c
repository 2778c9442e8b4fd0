// GPU-UNCOMPARED: LLVM 19's bundled runtime sends the tool no target callbacks on the GPU
// TOOL: ompt_tool.c
// OMPT data operations of the device memory routines, compared with LLVM 19's:
// omp_target_alloc / omp_target_free (also on the initial device, which reports nothing, and
// of null), llvm_omp_target_alloc_{device,host,shared}, omp_target_memcpy host to device,
// device to host and between two devices (staged through the host by both runtimes),
// omp_target_memcpy_rect, omp_target_associate_ptr / omp_target_disassociate_ptr and a
// region using the associated memory.
#include <omp.h>
#include <stdio.h>

void *llvm_omp_target_alloc_device(size_t, int);
void *llvm_omp_target_alloc_host(size_t, int);
void *llvm_omp_target_alloc_shared(size_t, int);
void llvm_omp_target_free_device(void *, int);
void llvm_omp_target_free_host(void *, int);
void llvm_omp_target_free_shared(void *, int);

int main(void) {
  int host = omp_get_initial_device();
  int d1 = omp_get_num_devices() > 1 ? 1 : 0;
  int src[16], dst[16] = {0};
  for (int i = 0; i < 16; i++) src[i] = i + 1;

  printf("-- alloc on the initial device, free of null\n");
  void *hp = omp_target_alloc(32, host);
  omp_target_free(hp, host);
  omp_target_free(NULL, 0);

  printf("-- alloc, memcpy in every direction, free\n");
  int *p = omp_target_alloc(sizeof src, 0);
  int *q = omp_target_alloc(sizeof src, d1);
  omp_target_memcpy(p, src, sizeof src, 0, 0, 0, host);
  if (d1 != 0) omp_target_memcpy(q, p, sizeof src, 0, 0, d1, 0);
  else omp_target_memcpy(q, src, sizeof src, 0, 0, 0, host);
  omp_target_memcpy(dst, q, 8 * sizeof(int), 2 * sizeof(int), 4 * sizeof(int), host, d1);

  printf("-- memcpy_rect (2 rows of 4 ints)\n");
  size_t vol[2] = {2, 4}, zero[2] = {0, 0}, dims[2] = {4, 4};
  omp_target_memcpy_rect(p, src, sizeof(int), 2, vol, zero, zero, dims, dims, 0, host);

  printf("-- associate, a region on the associated memory, disassociate\n");
  int v[4] = {1, 2, 3, 4};
  omp_target_associate_ptr(v, p, sizeof v, 0, 0);
#pragma omp target map(tofrom : v)
  { v[0] = 42; }
#pragma omp target update from(v)
  omp_target_disassociate_ptr(v, 0);

  omp_target_free(p, 0);
  omp_target_free(q, d1);

  printf("-- llvm_omp_target_alloc_device / host / shared\n");
  void *a = llvm_omp_target_alloc_device(64, 0);
  void *b = llvm_omp_target_alloc_host(64, 0);
  void *c = llvm_omp_target_alloc_shared(64, 0);
  llvm_omp_target_free_device(a, 0);
  llvm_omp_target_free_host(b, 0);
  llvm_omp_target_free_shared(c, 0);

  printf("dst[0]=%d dst[7]=%d v[0]=%d\n", dst[0], dst[7], v[0]);
  return 0;
}
