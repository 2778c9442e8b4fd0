// LLVM 22's interop interface on a GPU: __tgt_interop_get with a prefer_type
// list, __tgt_interop_use60, __tgt_interop_release, ompx_interop_add_completion_callback,
// and an implicit (dispatch-style) object completed by __tgt_target_sync. The entry points
// are looked up at run time: LLVM 19's runtime has none of them (the program says so).
// Prints "interop60: all ok" when every check passes.
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct { int32_t fr_id; uint32_t attrs; int64_t impl_attrs; } spec_t;
typedef struct { uint32_t version; uint32_t flags; int gtid; } ctx_t;
typedef void *(*get_t)(void *, int32_t, int64_t, int32_t, spec_t *, ctx_t *, void *);
typedef int (*use_t)(void *, void *, ctx_t *, void *);
typedef int (*add_cb_t)(void *, void (*)(void *, void *), void *);
typedef void (*sync_t)(void *, int, void *, void *);
typedef int (*stream_sync_t)(void *);

static int calls[4];
static void *seen[4];
static void on_done(void *interop, void *data) {
  int i = (int)(intptr_t)data;
  calls[i]++;
  seen[i] = interop;
}

static int bad = 0;
#define CHECK(c, ...) do { if (!(c)) { bad++; printf("FAIL: " __VA_ARGS__); printf("\n"); } } while (0)

int main(void) {
  int x = 0;
#pragma omp target map(tofrom : x)
  x = 1; // the runtime and the device are up
  get_t get = (get_t)dlsym(RTLD_DEFAULT, "__tgt_interop_get");
  use_t use = (use_t)dlsym(RTLD_DEFAULT, "__tgt_interop_use60");
  use_t release = (use_t)dlsym(RTLD_DEFAULT, "__tgt_interop_release");
  add_cb_t add = (add_cb_t)dlsym(RTLD_DEFAULT, "ompx_interop_add_completion_callback");
  sync_t tsync = (sync_t)dlsym(RTLD_DEFAULT, "__tgt_target_sync");
  if (!get || !use || !release || !add) {
    printf("interop60: LLVM 22's interop entry points are absent from this runtime\n");
    return 0;
  }
  ctx_t ctx = {0, 0, omp_get_thread_num()};
  // prefer_type("sycl", "cuda"): sycl (4) is not offered, cuda (1) is.
  spec_t prefer[2] = {{4, 0, 0}, {1, 0, 0}};
  omp_interop_t o = (omp_interop_t)get(NULL, 1, 0, 2, prefer, &ctx, NULL);
  CHECK(o != omp_interop_none, "no targetsync object");
  if (o == omp_interop_none) { printf("interop60: %d failed\n", bad); return 1; }
  int rc = 0;
  intptr_t fr = omp_get_interop_int(o, omp_ipr_fr_id, &rc);
  const char *name = omp_get_interop_str(o, omp_ipr_fr_name, &rc);
  printf("prefer_type(sycl, cuda): fr_id %ld (%s)\n", (long)fr, name ? name : "(null)");
  CHECK(fr == 1 && name && strcmp(name, "cuda") == 0, "fr_id %ld", (long)fr);
  void *stream = omp_get_interop_ptr(o, omp_ipr_targetsync, &rc);
  CHECK(stream != NULL && rc == omp_irc_success, "no targetsync stream (rc %d)", rc);
  stream_sync_t ss = (stream_sync_t)dlsym(RTLD_DEFAULT, "cuStreamSynchronize");
  if (ss) CHECK(ss(stream) == 0, "the targetsync stream is not a CUDA stream");
  // No preference: the device's own runtime, cuda_driver (2).
  omp_interop_t d = (omp_interop_t)get(NULL, 0, 0, 0, NULL, &ctx, NULL);
  CHECK(d != omp_interop_none && omp_get_interop_int(d, omp_ipr_fr_id, &rc) == 2, "default fr_id");
  // Completion callbacks: run once by a blocking use, once more by release.
  CHECK(add(o, on_done, (void *)0) == 0, "add_completion_callback");
  CHECK(use(NULL, o, &ctx, NULL) == 0, "use60");
  printf("callback after use: %d (object passed: %s)\n", calls[0], seen[0] == (void *)o ? "yes" : "no");
  CHECK(calls[0] == 1 && seen[0] == (void *)o, "callback after use");
  CHECK(use(NULL, o, &ctx, NULL) == 0 && calls[0] == 1, "a callback runs once");
  CHECK(add(o, on_done, (void *)1) == 0, "add 2");
  CHECK(release(NULL, o, &ctx, NULL) == 0, "release");
  CHECK(calls[1] == 1, "callback at release: %d", calls[1]);
  CHECK(release(NULL, o, &ctx, NULL) != 0, "a released object is refused");
  CHECK(add(o, on_done, (void *)2) != 0 && add(NULL, on_done, NULL) != 0, "add on a dead object");
  CHECK(release(NULL, d, &ctx, NULL) == 0, "release target object");
  // Implicit objects: one per thread and kind, reused, completed at a synchronisation point.
  ctx_t imp = {0, 1, omp_get_thread_num()};
  omp_interop_t i1 = (omp_interop_t)get(NULL, 1, 0, 0, NULL, &imp, NULL);
  omp_interop_t i2 = (omp_interop_t)get(NULL, 1, 0, 0, NULL, &imp, NULL);
  CHECK(i1 != omp_interop_none && i1 == i2, "implicit object reused");
  CHECK(add(i1, on_done, (void *)3) == 0, "add implicit");
  if (tsync) tsync(NULL, imp.gtid, NULL, NULL);
  printf("implicit object reused: %s; callback at __tgt_target_sync: %d\n", i1 == i2 ? "yes" : "no", calls[3]);
  CHECK(calls[3] == 1, "callback at target_sync");
  if (bad == 0) printf("interop60: all ok\n");
  else printf("interop60: %d failed\n", bad);
  return bad != 0;
}
