// STDERR
// `interop init(target:)` and `destroy`: on the host device, which offers no foreign runtime,
// the object is omp_interop_none with LLVM 19's message; destroying omp_interop_none does
// nothing. On a GPU both runtimes give an object.
#include <omp.h>
#include <stdio.h>

int main(void) {
  omp_interop_t obj = omp_interop_none;
#pragma omp interop init(target : obj) device(0)
  printf("init(target) on device 0: %s\n",
         obj == omp_interop_none ? "omp_interop_none" : "an object");
#pragma omp interop destroy(obj)
  printf("after destroy: %s\n", obj == omp_interop_none ? "omp_interop_none" : "an object");
  omp_interop_t none = omp_interop_none;
#pragma omp interop destroy(none)
  printf("destroy of omp_interop_none: done\n");
  return 0;
}
