// ONLY: clang22 (it passes LLVM 22's ATTACH map bits by hand, which LLVM 19's runtime does not know)
// STDERR
// ENV: LIBOMPTARGET_INFO=35
// ATTACH entries that clang 22 C cannot spell: `attach(always)` (OpenMP 6.1), and the
// PRIVATE | ATTACH kernel argument (a firstprivate pointer whose private copy is initialised to
// the device address of its pointee), passed to the runtime's entry points directly. Also:
// ATTACH entries never count references and are ignored at exit. LIBOMPTARGET_INFO=35 (0x23)
// prints the arguments, the lookups and the copies, in LLVM 22's words.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TO 0x1
#define FROM 0x2
#define ALWAYS 0x4
#define TARGET_PARAM 0x20
#define PRIVATE 0x80
#define ATTACH 0x4000

void __tgt_target_data_begin_mapper(void *loc, int64_t dev, int32_t n, void **bases,
                                    void **begins, int64_t *sizes, int64_t *types, void **names,
                                    void **mappers);
void __tgt_target_data_end_mapper(void *loc, int64_t dev, int32_t n, void **bases, void **begins,
                                  int64_t *sizes, int64_t *types, void **names, void **mappers);
struct kernel_args {
  uint32_t version, num_args;
  void **bases, **begins;
  int64_t *sizes, *types;
  void **names, **mappers;
  uint64_t tripcount, flags;
  uint32_t teams[3], threads[3], dyn_mem;
};
int __tgt_target_kernel(void *loc, int64_t dev, int32_t teams, int32_t threads, void *host_ptr,
                        struct kernel_args *args);

#include "llvm22_entries.h"

static void *device_value(void **host_ptr, int dev) {
  void *value = NULL;
  void *where = omp_get_mapped_ptr(host_ptr, dev);
  if (!where) return (void *)-1;
  omp_target_memcpy(&value, where, sizeof value, 0, 0, omp_get_initial_device(), dev);
  return value;
}

static const char *state(void **host_ptr, void *pointee, int dev) {
  void *v = device_value(host_ptr, dev);
  if (v == (void *)-1) return "pointer not mapped";
  if (v == omp_get_mapped_ptr(pointee, dev)) return "attached";
  if (v == *host_ptr) return "host value";
  return "other";
}

/* The kernel launched by hand: it receives the address of a private copy of `q` (a pointer
   passed by reference, like a mapped scalar) and writes what it finds through it. */
void probe(int *q, long *out) {
#pragma omp target map(to : q) map(from : out[0:2])
  {
    out[0] = q[1];
    out[1] = (long)q;
  }
}

static void begin1(void *base, void *begin, int64_t size, int64_t type) {
  void *bases[1] = {base}, *begins[1] = {begin};
  int64_t sizes[1] = {size}, types[1] = {type};
  __tgt_target_data_begin_mapper(NULL, omp_get_default_device(), 1, bases, begins, sizes, types,
                                 NULL, NULL);
}
static void end1(void *base, void *begin, int64_t size, int64_t type) {
  void *bases[1] = {base}, *begins[1] = {begin};
  int64_t sizes[1] = {size}, types[1] = {type};
  __tgt_target_data_end_mapper(NULL, omp_get_default_device(), 1, bases, begins, sizes, types,
                               NULL, NULL);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  int dev = omp_get_default_device();
  int a[4] = {10, 11, 12, 13};
  int *p = a;

  /* pointer and pointee mapped by separate constructs, then a plain ATTACH: nothing new, so
     nothing happens; ATTACH | ALWAYS attaches */
  begin1(a, a, sizeof a, TO);
  begin1(&p, &p, sizeof p, TO);
  fprintf(stderr, "-- attach (auto)\n");
  begin1(&p, &a[1], sizeof p, ATTACH);
  printf("attach, nothing new:  %s\n", state((void **)&p, a, dev));
  fprintf(stderr, "-- attach (always)\n");
  begin1(&p, &a[1], sizeof p, ATTACH | ALWAYS);
  printf("attach always:        %s\n", state((void **)&p, a, dev));
  fprintf(stderr, "-- attach (always) again: already attached, no copy\n");
  begin1(&p, &a[1], sizeof p, ATTACH | ALWAYS);

  /* no reference counts: one release of each leaves nothing mapped; ATTACH is ignored at exit */
  fprintf(stderr, "-- exit with an ATTACH entry\n");
  end1(&p, &a[1], sizeof p, ATTACH);
  printf("after an exit ATTACH: a present=%d p present=%d\n", omp_target_is_present(a, dev),
         omp_target_is_present(&p, dev));
  end1(&p, &p, sizeof p, 0);
  end1(a, a, sizeof a, 0);
  printf("after the releases:   a present=%d p present=%d\n", omp_target_is_present(a, dev),
         omp_target_is_present(&p, dev));

  /* PRIVATE | ATTACH kernel argument */
  void *region = region_named("probe");
  printf("found the region: %d\n", region != NULL);
  long out[2] = {0, 0};
  for (int mapped = 1; mapped >= 0; --mapped) {
    if (mapped) begin1(a, a, sizeof a, TO);
    fprintf(stderr, "-- kernel, pointee %smapped\n", mapped ? "" : "not ");
    /* the kernel's parameters, in clang's order: out, then q */
    void *bases[2] = {out, &p}, *begins[2] = {out, &a[1]};
    int64_t sizes[2] = {sizeof out, sizeof p};
    int64_t types[2] = {FROM | TARGET_PARAM, PRIVATE | ATTACH | TARGET_PARAM};
    struct kernel_args ka = {3, 2, bases, begins, sizes, types, NULL, NULL, 0, 0,
                             {1, 0, 0}, {1, 0, 0}, 0};
    int rc = __tgt_target_kernel(NULL, dev, 1, 1, region, &ka);
    void *expect = mapped ? omp_get_mapped_ptr(a, dev) : (void *)a;
    printf("kernel rc=%d read q[1]=%ld, private pointer is the %s\n", rc, out[0],
           (void *)out[1] == expect ? (mapped ? "device pointee" : "host pointer") : "wrong value");
    if (mapped) end1(a, a, sizeof a, 0);
  }
  return 0;
}
