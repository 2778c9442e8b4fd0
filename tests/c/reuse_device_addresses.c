// HOST-ONLY: on a GPU our blocks come from the CUDA memory pool, not LLVM's memory manager
// Which device addresses come back after an unmap, under LLVM 19's memory manager, which it
// uses on the host device too (OpenMP leaves device addresses to the implementation; programs
// still print them and compare omp_get_mapped_ptr results): a freed block of at most
// LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD bytes (8 KiB) is kept and handed to the next request
// of exactly the same size, the block freed first first; a request of another size, even a
// smaller one, gets fresh memory. omp_target_alloc and omp_target_free go through it too.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int dev = omp_get_default_device();
  char x[64], y[64], z[64], w[40], big[4096], s1[2048], s2[2048];

#pragma omp target enter data map(alloc : x, y)
  void *px = omp_get_mapped_ptr(x, dev), *py = omp_get_mapped_ptr(y, dev);
#pragma omp target exit data map(delete : x)
#pragma omp target exit data map(delete : y)
#pragma omp target enter data map(alloc : z)
  void *pz = omp_get_mapped_ptr(z, dev);
  printf("same size: z gets x's block %d, y's block %d\n", pz == px, pz == py);

#pragma omp target enter data map(alloc : w)
  void *pw = omp_get_mapped_ptr(w, dev);
  printf("smaller size: w gets y's block %d\n", pw == py);

#pragma omp target enter data map(alloc : big)
  void *pb = omp_get_mapped_ptr(big, dev);
#pragma omp target exit data map(delete : big)
#pragma omp target enter data map(alloc : s1, s2)
  void *p1 = omp_get_mapped_ptr(s1, dev), *p2 = omp_get_mapped_ptr(s2, dev);
  printf("two halves: s1 at big's block %d, s2 at big's block %d\n", p1 == pb, p2 == pb);

  /* a region's mapping, released and made again */
  int v[16] = {0};
#pragma omp target map(tofrom : v)
  { v[0] = 1; }
#pragma omp target enter data map(to : v)
  void *pv1 = omp_get_mapped_ptr(v, dev);
#pragma omp target exit data map(release : v)
#pragma omp target enter data map(to : v)
  printf("remapped v: same device address %d\n", omp_get_mapped_ptr(v, dev) == pv1);
#pragma omp target exit data map(release : v)

  void *a = omp_target_alloc(100, dev), *b = omp_target_alloc(100, dev);
  omp_target_free(a, dev);
  omp_target_free(b, dev);
  void *c = omp_target_alloc(100, dev);
  printf("omp_target_alloc: the block freed first %d, the last %d\n", c == a, c == b);
  omp_target_free(c, dev);

#pragma omp target exit data map(delete : z, w, s1, s2)
  return 0;
}
