// DIVERGENCE: a PTR_AND_OBJ map item whose pointer lies at address 0 is refused with a message; LLVM 19 reads the pointer at address 0 and crashes (SIGSEGV)
// STATUS: signal 6
// OURS-STDERR: omptarget error: map item 0 at host address 0xADDR is a pointer-and-object item whose pointer lies at address 0 (a NULL base): nothing is mapped on device 0
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

void __tgt_target_data_begin_mapper(void *loc, int64_t dev, int32_t n, void **bases, void **begins,
                                    int64_t *sizes, int64_t *types, void **names, void **mappers);

int main(void) {
  int a[4] = {1, 2, 3, 4};
  void *bases[1] = {NULL}; /* where the pointer to the data lies: nowhere */
  void *begins[1] = {a};
  int64_t sizes[1] = {sizeof a};
  int64_t types[1] = {0x10 | 0x1}; /* PTR_AND_OBJ | TO */
  printf("entering a PTR_AND_OBJ item whose base is NULL\n");
  fflush(stdout);
  __tgt_target_data_begin_mapper(NULL, 0, 1, bases, begins, sizes, types, NULL, NULL);
  printf("not reached: present=%d\n", omp_target_is_present(a, 0));
  return 0;
}
