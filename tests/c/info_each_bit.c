// STDERR
// CFLAGS: -g
// Each LIBOMPTARGET_INFO bit of LLVM 19 on its own, switched with __tgt_set_info_flag around
// the same small program (enter data, a region, update, exit data, and use_device_ptr of an
// unmapped pointer): 0x01 construct arguments, 0x02 existing mappings, 0x04 table dumps,
// 0x08 mapping changes, 0x10 kernel launches, 0x20 data transfers, 0x40 items without a device
// counterpart; each line in LLVM 19's words.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void __tgt_set_info_flag(uint32_t);

static void program(void) {
  int a[4] = {1, 2, 3, 4};
  int s = 0;
  int *unmapped = malloc(sizeof(int));
#pragma omp target enter data map(to : a)
#pragma omp target map(tofrom : s)
  { s = a[0] + a[3]; }
#pragma omp target update from(a[1:2])
#pragma omp target exit data map(from : a)
#pragma omp target data use_device_ptr(unmapped)
  { s += 1; }
  free(unmapped);
}

int main(void) {
  program(); /* devices and images initialised before the first traced line */
  for (uint32_t bit = 1; bit <= 0x40; bit <<= 1) {
    fprintf(stderr, "--- LIBOMPTARGET_INFO bit 0x%x\n", bit);
    __tgt_set_info_flag(bit);
    program();
    __tgt_set_info_flag(0);
  }
  printf("done\n");
  return 0;
}
