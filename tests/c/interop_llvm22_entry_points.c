// ONLY: clang22 (LLVM 22's interop entry points; LLVM 19's runtime has none of them)
// LLVM 22's interop interface (__tgt_interop_get/use60/release and
// ompx_interop_add_completion_callback; clang 22 itself still emits clang 19's
// __tgt_interop_init/use/destroy) on the host device, which has no foreign runtime: no object
// is made, and the other entry points refuse omp_interop_none. The GPU side (an object with a
// prefer_type list, callbacks, implicit objects): gpu/tools/interop60.c.
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

typedef struct { int32_t fr_id; uint32_t attrs; int64_t impl_attrs; } spec_t;
typedef struct { uint32_t version; uint32_t flags; int gtid; } ctx_t;
typedef struct { int32_t ndeps, ndeps_noalias; void *deps, *noalias; } deps_t;
typedef void *(*get_t)(void *, int32_t, int64_t, int32_t, spec_t *, ctx_t *, deps_t *);
typedef int (*use_t)(void *, void *, ctx_t *, deps_t *);
typedef int (*add_cb_t)(void *, void (*)(void *, void *), void *);
typedef void (*sync_t)(void *, int, void *, void *);

static void never(void *o, void *d) { (void)o; (void)d; printf("a callback ran\n"); }

int main(void) {
  int x = 0;
#pragma omp target map(tofrom : x)
  x = 1;
  get_t get = (get_t)dlsym(RTLD_DEFAULT, "__tgt_interop_get");
  use_t use = (use_t)dlsym(RTLD_DEFAULT, "__tgt_interop_use60");
  use_t release = (use_t)dlsym(RTLD_DEFAULT, "__tgt_interop_release");
  add_cb_t add = (add_cb_t)dlsym(RTLD_DEFAULT, "ompx_interop_add_completion_callback");
  sync_t tsync = (sync_t)dlsym(RTLD_DEFAULT, "__tgt_target_sync");
  printf("entry points: %s\n", get && use && release && add && tsync ? "all present" : "missing");
  if (!get || !use || !release || !add || !tsync)
    return 1;
  ctx_t ctx = {0, 0, omp_get_thread_num()};
  spec_t prefer[2] = {{1, 0, 0}, {2, 0, 0}};
  for (int ty = 0; ty < 2; ty++) {
    void *o = get(NULL, ty, 0, 2, prefer, &ctx, NULL);
    printf("%s object on the host device: %s\n", ty ? "targetsync" : "target", o ? "made" : "none");
  }
  ctx_t nowait = {0, 2, omp_get_thread_num()};
  deps_t none = {0, 0, NULL, NULL};
  printf("use60(none): %s\n", use(NULL, NULL, &nowait, &none) != 0 ? "refused" : "accepted");
  printf("release(none): %s\n", release(NULL, NULL, &ctx, NULL) != 0 ? "refused" : "accepted");
  printf("add_completion_callback(none): %d\n", add(NULL, never, NULL));
  tsync(NULL, omp_get_thread_num(), NULL, NULL);
  printf("__tgt_target_sync returned, x=%d\n", x);
  return 0;
}
