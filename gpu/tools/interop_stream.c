// Interop on a GPU (OpenMP 5.2 §14): a CUDA kernel that the program launches through the
// driver API (PTX loaded with cuModuleLoadData, cuLaunchKernel) on the interop object's
// targetsync stream, between target regions, ordered by `depend` on `interop use`. The
// kernel spins ~SPIN clock cycles before it writes, so a runtime that does not wait for the
// stream at `interop use` lets the next region run first and the result comes out wrong.
//
//   1. nowait + depend: region writes x[i] = i; interop kernel doubles x; `interop use
//      depend(inout: x) nowait`; region `depend(inout: x) nowait` adds 1; x[i] == 2i + 1.
//   2. blocking use: the same with blocking constructs.
//   3. freed then reused: the interop kernel fills y (mapped) with 7; `interop use`; y's
//      mapping is deleted (a stream-ordered free); z of the same size is mapped (the memory
//      is typically reused), a region fills it with 3; z must read 3 everywhere.
//
// usage: interop_stream [SPIN_CYCLES]   (default 200000000, ~0.1 s on an H200)
// Prints one verdict per case and exits 0 when all hold; without a CUDA driver it says so
// and exits 0 (nothing to test).
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int CUresult;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;
static CUresult (*cuCtxSetCurrent)(CUcontext);
static CUresult (*cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, unsigned, CUstream, void **, void **);

// spin_scale(double *x, int n, long long cycles, double factor, double add):
// x[i] = x[i] * factor + add, after spinning `cycles` clock cycles.
static const char *ptx =
    ".version 6.0\n"
    ".target sm_52\n"
    ".address_size 64\n"
    ".visible .entry spin_scale(.param .u64 p_x, .param .u32 p_n, .param .u64 p_cycles,\n"
    "                           .param .f64 p_factor, .param .f64 p_add)\n"
    "{\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .b64 %rd<10>;\n"
    "  .reg .f64 %fd<5>;\n"
    "  ld.param.u64 %rd1, [p_x];\n"
    "  ld.param.u32 %r1, [p_n];\n"
    "  ld.param.u64 %rd2, [p_cycles];\n"
    "  ld.param.f64 %fd3, [p_factor];\n"
    "  ld.param.f64 %fd4, [p_add];\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  mov.u32 %r3, %ntid.x;\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "  mov.u64 %rd3, %clock64;\n"
    "SPIN:\n"
    "  mov.u64 %rd4, %clock64;\n"
    "  sub.s64 %rd5, %rd4, %rd3;\n"
    "  setp.lt.s64 %p1, %rd5, %rd2;\n"
    "  @%p1 bra SPIN;\n"
    "  setp.ge.s32 %p2, %r5, %r1;\n"
    "  @%p2 bra DONE;\n"
    "  cvta.to.global.u64 %rd6, %rd1;\n"
    "  mul.wide.s32 %rd7, %r5, 8;\n"
    "  add.s64 %rd8, %rd6, %rd7;\n"
    "  ld.global.f64 %fd1, [%rd8];\n"
    "  fma.rn.f64 %fd2, %fd1, %fd3, %fd4;\n"
    "  st.global.f64 [%rd8], %fd2;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

#define N 1024
static CUfunction kernel;
static long long spin = 200000000LL;

static int launch(CUstream s, void *dev_x, double factor, double add) {
  int n = N;
  void *args[] = {&dev_x, &n, &spin, &factor, &add};
  CUresult r = cuLaunchKernel(kernel, N / 128, 1, 1, 128, 1, 1, 0, s, args, NULL);
  if (r != 0)
    printf("cuLaunchKernel failed: %d\n", r);
  return r == 0;
}

static int setup(omp_interop_t obj, CUstream *stream) {
  int rc;
  CUcontext ctx = omp_get_interop_ptr(obj, omp_ipr_device_context, &rc);
  if (rc != omp_irc_success || !ctx) {
    printf("no device context (rc %d)\n", rc);
    return 0;
  }
  *stream = omp_get_interop_ptr(obj, omp_ipr_targetsync, &rc);
  if (rc != omp_irc_success || !*stream) {
    printf("no targetsync stream (rc %d)\n", rc);
    return 0;
  }
  const char *fr = omp_get_interop_str(obj, omp_ipr_fr_name, &rc);
  printf("interop: fr_name=%s fr_id=%ld vendor_name=%s\n", fr ? fr : "(null)",
         (long)omp_get_interop_int(obj, omp_ipr_fr_id, &rc),
         omp_get_interop_str(obj, omp_ipr_vendor_name, &rc) ? "set" : "(null)");
  CUmodule m;
  if (cuCtxSetCurrent(ctx) || cuModuleLoadData(&m, ptx) ||
      cuModuleGetFunction(&kernel, m, "spin_scale")) {
    printf("loading the PTX kernel failed\n");
    return 0;
  }
  return 1;
}

static int verdict(const char *what, const double *v, double (*want)(int)) {
  int bad = 0;
  for (int i = 0; i < N; ++i)
    if (v[i] != want(i)) {
      if (!bad)
        printf("%s: WRONG (element %d is %g, expected %g)\n", what, i, v[i], want(i));
      ++bad;
    }
  if (!bad)
    printf("%s: ok\n", what);
  return bad == 0;
}
static double twice_plus_one(int i) { return 2.0 * i + 1; }
static double three(int i) { (void)i; return 3.0; }

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc > 1)
    spin = atoll(argv[1]);
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (!cuda) {
    printf("no CUDA driver: nothing to test\n");
    return 0;
  }
  cuCtxSetCurrent = dlsym(cuda, "cuCtxSetCurrent");
  cuModuleLoadData = dlsym(cuda, "cuModuleLoadData");
  cuModuleGetFunction = dlsym(cuda, "cuModuleGetFunction");
  cuLaunchKernel = dlsym(cuda, "cuLaunchKernel");
  int dev = omp_get_default_device(), ok = 1;
  static double x[N], y[N], z[N];

  omp_interop_t obj = omp_interop_none;
#pragma omp interop init(targetsync : obj) device(dev)
  if (obj == omp_interop_none) {
    printf("interop init gave omp_interop_none\n");
    return 1;
  }
  CUstream s;
  if (!setup(obj, &s))
    return 1;

  // 1. nowait and depend
#pragma omp target enter data map(alloc : x[0 : N])
#pragma omp target depend(out : x) nowait
  for (int i = 0; i < N; ++i)
    x[i] = i;
#pragma omp interop use(obj) depend(inout : x)
  ok &= launch(s, omp_get_mapped_ptr(x, dev), 2.0, 0.0);
#pragma omp interop use(obj) depend(inout : x) nowait
#pragma omp target depend(inout : x) nowait
  for (int i = 0; i < N; ++i)
    x[i] += 1;
#pragma omp taskwait
#pragma omp target exit data map(from : x[0 : N])
  ok &= verdict("depend + nowait", x, twice_plus_one);

  // 2. blocking constructs
#pragma omp target enter data map(alloc : x[0 : N])
#pragma omp target
  for (int i = 0; i < N; ++i)
    x[i] = i;
  ok &= launch(s, omp_get_mapped_ptr(x, dev), 2.0, 0.0);
#pragma omp interop use(obj)
#pragma omp target
  for (int i = 0; i < N; ++i)
    x[i] += 1;
#pragma omp target exit data map(from : x[0 : N])
  ok &= verdict("blocking use", x, twice_plus_one);

  // 3. freed, then reused
#pragma omp target enter data map(alloc : y[0 : N])
  void *dy = omp_get_mapped_ptr(y, dev);
  ok &= launch(s, dy, 0.0, 7.0);
#pragma omp interop use(obj) depend(inout : y)
#pragma omp target exit data map(delete : y[0 : N])
#pragma omp target enter data map(alloc : z[0 : N])
  void *dz = omp_get_mapped_ptr(z, dev);
#pragma omp target
  for (int i = 0; i < N; ++i)
    z[i] = 3.0;
#pragma omp target exit data map(from : z[0 : N])
  ok &= verdict("freed then reused", z, three);
  printf("   (z's device memory %s y's)\n", dz == dy ? "is" : "is not");

#pragma omp interop destroy(obj) nowait
#pragma omp taskwait
  printf("interop_stream: %s\n", ok ? "all ok" : "FAILED");
  return ok ? 0 : 1;
}
