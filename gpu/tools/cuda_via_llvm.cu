// A CUDA kernel launched through LLVM's offload runtime (clang 22 -foffload-via-llvm).
#include <stdio.h>
#include <stddef.h>
extern "C" {
void *omp_target_alloc(size_t, int);
void omp_target_free(void *, int);
int omp_target_memcpy(void *, const void *, size_t, size_t, size_t, int, int);
int omp_get_initial_device(void);
}
struct pair { char c; double d; };
__global__ void axpy(int n, double a, const double *x, double *y, char tag, struct pair p, short s) {
#ifdef __CUDA_ARCH__
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() + __nvvm_read_ptx_sreg_tid_x();
  if (i < n) y[i] = a * x[i] + y[i] + tag + p.c + p.d + s;
#endif
}
int main() {
  enum { N = 1000 };
  double x[N], y[N];
  for (int i = 0; i < N; ++i) { x[i] = i; y[i] = 1; }
  int h = omp_get_initial_device();
  double *dx = (double *)omp_target_alloc(sizeof x, 0), *dy = (double *)omp_target_alloc(sizeof y, 0);
  omp_target_memcpy(dx, x, sizeof x, 0, 0, 0, h);
  omp_target_memcpy(dy, y, sizeof y, 0, 0, 0, h);
  struct pair p = {3, 0.5};
  axpy<<<(N + 127) / 128, 128>>>(N, 2.0, dx, dy, 1, p, 10);
  omp_target_memcpy(y, dy, sizeof y, 0, 0, h, 0);
  int bad = 0;
  for (int i = 0; i < N; ++i) bad += y[i] != 2.0 * i + 1 + 1 + 3 + 0.5 + 10;
  printf("axpy through llvmLaunchKernel: %s (y[7] = %g)\n", bad ? "WRONG" : "ok", y[7]);
  omp_target_free(dx, 0); omp_target_free(dy, 0);
  return bad != 0;
}
