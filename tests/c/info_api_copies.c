// ENV: LIBOMPTARGET_INFO=32
// STDERR
// The copies of the device memory routines (OpenMP 5.2 §18.8) as LIBOMPTARGET_INFO=32 shows
// them under LLVM 19: omp_target_memcpy from and to the host, between two devices and within
// one device of the host plugin (both through a host buffer: two copies), one copy per
// contiguous row of omp_target_memcpy_rect, and omp_target_memcpy_async's copy. Named after the
// mapping LLVM's lookup of the host range lands on (`unknown` here: nothing is mapped).
#include <omp.h>
#include <stdio.h>

int main(void) {
  int host = omp_get_initial_device();
  int src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dst[8] = {0};
  int *d0 = omp_target_alloc(sizeof src, 0);
  int *d0b = omp_target_alloc(sizeof src, 0);
  /* a second device where there is one (the host plugin has four; a GPU machine may not) */
  int second = omp_get_num_devices() > 1 ? 1 : 0;
  int *d1 = omp_target_alloc(sizeof src, second);

  fprintf(stderr, "-- host to device\n");
  omp_target_memcpy(d0, src, sizeof src, 0, 0, 0, host);
  fprintf(stderr, "-- device 0 to the second device\n");
  omp_target_memcpy(d1, d0, sizeof src, 0, 0, second, 0);
  fprintf(stderr, "-- within device 0\n");
  omp_target_memcpy(d0b, d0, 4 * sizeof(int), 0, 4 * sizeof(int), 0, 0);
  fprintf(stderr, "-- device to host, with offsets\n");
  omp_target_memcpy(dst, d1, 2 * sizeof(int), sizeof(int), 2 * sizeof(int), host, second);
  printf("dst[1]=%d dst[2]=%d\n", dst[1], dst[2]);

  fprintf(stderr, "-- rect: 2 rows of 2\n");
  size_t volume[2] = {2, 2}, dst_off[2] = {0, 0}, src_off[2] = {0, 1}, dims[2] = {2, 4};
  omp_target_memcpy_rect(d0, src, sizeof(int), 2, volume, dst_off, src_off, dims, dims, 0, host);
  fprintf(stderr, "-- async\n");
  omp_target_memcpy_async(dst, d0b, 4 * sizeof(int), 0, 0, host, 0, 0, NULL);
#pragma omp taskwait
  printf("dst[0]=%d dst[3]=%d\n", dst[0], dst[3]);
  omp_target_memcpy(dst, d0, 2 * sizeof(int), 0, 4 * sizeof(int), host, 0);
  printf("rect row 2: %d %d\n", dst[0], dst[1]);

  omp_target_free(d0, 0);
  omp_target_free(d0b, 0);
  omp_target_free(d1, second);
  return 0;
}
