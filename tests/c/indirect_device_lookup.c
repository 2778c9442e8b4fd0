// `declare target indirect` (OpenMP 5.2 §7.8.2) through the runtime's indirect-call table:
// host function pointers stored in mapped memory are not translated by the map (only
// pointers passed to the region are); device code translates them with LLVM's
// `__llvm_omp_indirect_call_lookup`, which on a GPU searches the table the plugin publishes
// in `__omp_rtl_device_environment` when it loads the image. (Declared as LLVM's own tests
// do: provided by the device runtime on GPUs, the identity on the host device.)
#include <stdio.h>

#pragma omp begin declare variant match(device = {kind(gpu)})
void *__llvm_omp_indirect_call_lookup(void *host_ptr);
#pragma omp declare target to(__llvm_omp_indirect_call_lookup) device_type(nohost)
#pragma omp end declare variant

#pragma omp begin declare variant match(device = {kind(cpu)})
void *__llvm_omp_indirect_call_lookup(void *host_ptr) { return host_ptr; }
#pragma omp end declare variant

#pragma omp begin declare target indirect
int op_add(int a, int b) { return a + b; }
int op_sub(int a, int b) { return a - b; }
int op_mul(int a, int b) { return a * b; }
int op_max(int a, int b) { return a > b ? a : b; }
#pragma omp end declare target

typedef int (*binop_t)(int, int);

int main(void) {
  // A table of host function pointers, mapped as data.
  binop_t table[8] = {op_mul, op_add, op_max, op_sub, op_add, op_mul, op_sub, op_max};
  int results[8] = {0};
  int errors = 0;
#pragma omp target teams distribute parallel for map(to : table) map(from : results)
  for (int i = 0; i < 8; i++) {
    binop_t f = (binop_t)__llvm_omp_indirect_call_lookup((void *)table[i]);
    results[i] = f(i + 3, 2);
  }
  for (int i = 0; i < 8; i++) {
    printf("%d ", results[i]);
    if (results[i] != table[i](i + 3, 2))
      errors++;
  }
  printf("\n%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
