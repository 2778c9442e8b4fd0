// DIVERGENCE(gpu): the region's reference keeps the array mapped until the region ends, so its copy back lands after its kernel wrote; LLVM 19 releases the region's reference when it issues the region, and the exit data copies the array back at once, before the kernel wrote (0 of 4096 written on the H200); on the host device, where a region's kernel has run when its reference is released, both agree
// `target exit data map(from)` of an array while a `nowait` region that maps it `tofrom` is
// still running. Under OpenMP (5.2 §5.8.3) the region holds a reference until it ends, so
// the exit data only releases its own: nothing is copied back then; the region's end
// releases the last reference and copies back what its kernel wrote. Either way the host
// ends with the kernel's values. A runtime that releases the region's reference when it
// issues the region, and lets the exit data copy the array back at once, copies back what
// was there before the kernel wrote, and the kernel's values are lost.
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#define N 4096

static int a[N];

int main(void) {
  int errors = 0;
  {
    for (int i = 0; i < N; ++i) a[i] = 0;
#pragma omp target enter data map(to : a[0:N])
#pragma omp target map(tofrom : a[0:N]) nowait
    {
      double t0 = omp_get_wtime();
      while (omp_get_wtime() - t0 < 0.2) {
      }
      for (int i = 0; i < N; ++i) a[i] = 1;
    }
    // The region is on the device by now, its kernel still spinning.
    usleep(50000);
#pragma omp target exit data map(from : a[0:N])
#pragma omp taskwait
    int ones = 0;
    for (int i = 0; i < N; ++i) ones += a[i] == 1;
    printf("exit data map(from) while the region runs: %d of %d written\n", ones, N);
    errors += ones != N;
    printf("present after: %d\n", omp_target_is_present(a, omp_get_default_device()));
  }
  printf("%s\n", errors ? "FAIL" : "PASS");
  return errors != 0;
}
