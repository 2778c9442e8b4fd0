// STDERR
// ompx_dump_mapping_tables() while every table is empty (its output then
// contains no addresses; it goes to stdout and names every device, so the
// lines follow the machine's device count, the same under both runtimes),
// and __tgt_set_info_flag(0x8) (mapping-table changes, printed to stderr)
// around one region, then __tgt_set_info_flag(0) again.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

void ompx_dump_mapping_tables(void);
void __tgt_set_info_flag(uint32_t);

int main(void) {
  int a[4] = {1, 2, 3, 4};
  /* initialise the runtime and the devices first */
#pragma omp target map(tofrom : a)
  { a[0] = 10; }
  fflush(stdout);
  fprintf(stderr, "--- dump with empty tables\n");
  fflush(stderr);
  ompx_dump_mapping_tables();
  fflush(stdout);
  fflush(stderr);

  fprintf(stderr, "--- info flag 8 on\n");
  fflush(stderr);
  __tgt_set_info_flag(0x8);
#pragma omp target map(tofrom : a)
  { a[1] = 20; }
  __tgt_set_info_flag(0);
  fprintf(stderr, "--- info flag off\n");
  fflush(stderr);
#pragma omp target map(tofrom : a)
  { a[2] = 30; }
  printf("a=%d %d %d %d\n", a[0], a[1], a[2], a[3]);
  printf("%s\n", (a[0] == 10 && a[1] == 20 && a[2] == 30) ? "PASS" : "FAIL");
  return 0;
}
