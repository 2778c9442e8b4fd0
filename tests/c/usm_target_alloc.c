// GPU-UNCOMPARED: unified shared memory on an H200 without HMM/ATS (PAGEABLE_MEMORY_ACCESS 0): ours refuses at registration, LLVM 19 faults (docs/GPU.md)
// `unified_shared_memory` with device memory from `omp_target_alloc` (OpenMP 5.2 §18.8.1):
// it is still device memory: passed with `is_device_ptr`, filled with `omp_target_memcpy`,
// not "present" as mapped host data, and host data next to it is used in place.
#include <omp.h>
#include <stdio.h>

#pragma omp requires unified_shared_memory

int main(void) {
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  int errors = 0;
  int src[8], dst[8] = {0};
  for (int i = 0; i < 8; i++)
    src[i] = i * i;
  int *d = omp_target_alloc(8 * sizeof(int), dev);
  if (!d)
    return 1;
  if (omp_target_memcpy(d, src, sizeof src, 0, 0, dev, host))
    errors++;
  printf("allocation present: %d\n", omp_target_is_present(d, dev));
  int sum = 0;
#pragma omp target is_device_ptr(d) map(tofrom : sum) map(to : dst)
  for (int i = 0; i < 8; i++) {
    sum += d[i];
    dst[i] = d[i] + 1; // host data used in place: visible although mapped `to`
    d[i] = -d[i];
  }
  printf("sum %d dst[7] %d\n", sum, dst[7]);
  if (sum != 140 || dst[7] != 50)
    errors++;
  int back[8] = {0};
  if (omp_target_memcpy(back, d, sizeof back, 0, 0, host, dev))
    errors++;
  printf("back[3] %d\n", back[3]);
  if (back[3] != -9)
    errors++;
  // The pointer itself, passed firstprivate (a plain scalar), still reaches the memory.
  int *p = d;
  int first = 1;
#pragma omp target map(tofrom : first)
  first = p[2];
  printf("first %d\n", first);
  if (first != -4)
    errors++;
  omp_target_free(d, dev);
  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
