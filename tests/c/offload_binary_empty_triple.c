// ONLY: clang19 (LLVM 22 registers no device for an OffloadBinary whose triple is empty (LLVM 19 judges the image); ours follows LLVM 19 for every binary: a gap for clang-22 binaries, see the note of 2026-12-01)
// An OffloadBinary whose triple and arch are empty strings: the image is judged by its own
// bytes, as LLVM 19 judges it (before, ours took "" for a triple no plugin runs and found no
// device). The program interposes its own __tgt_register_lib (the executable's symbol comes
// first) and registers its device image wrapped in such an OffloadBinary.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct image { unsigned char *start, *end; void *entries_begin, *entries_end; };
struct desc { int32_t n; struct image *images; void *entries_begin, *entries_end; };

static struct desc copy;
static struct image copy_image;

static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

void __tgt_register_lib(struct desc *d) {
  void (*real)(struct desc *) = (void (*)(struct desc *))dlsym(RTLD_NEXT, "__tgt_register_lib");
  size_t n = (size_t)(d->images[0].end - d->images[0].start);
  static const char strings[] = "triple\0\0arch\0"; /* keys whose values are "" */
  size_t header = 32, entry = 40, table = 32, str_at = header + entry + table;
  size_t image_at = (str_at + sizeof strings + 7) & ~(size_t)7, size = image_at + n;
  unsigned char *b = aligned_alloc(8, (size + 7) & ~(size_t)7);
  memset(b, 0, size);
  memcpy(b, "\x10\xff\x10\xad", 4);
  b[4] = 1; /* version 1 */
  put64(b + 8, size);
  put64(b + 16, header);
  put64(b + 24, entry);
  unsigned char *e = b + header;
  e[0] = 1; /* image kind: object */
  e[2] = 1; /* offload kind: OpenMP */
  put64(e + 8, header + entry);
  put64(e + 16, 2);
  put64(e + 24, image_at);
  put64(e + 32, n);
  unsigned char *t = b + header + entry;
  put64(t, str_at);           /* "triple" */
  put64(t + 8, str_at + 6);   /* -> "" (its own terminator) */
  put64(t + 16, str_at + 8);  /* "arch" */
  put64(t + 24, str_at + 12); /* -> "" */
  memcpy(b + str_at, strings, sizeof strings);
  memcpy(b + image_at, d->images[0].start, n);
  copy = *d;
  copy_image = d->images[0];
  copy_image.start = b;
  copy_image.end = b + size;
  copy.images = &copy_image;
  real(&copy);
}

void __tgt_unregister_lib(struct desc *d) {
  void (*real)(struct desc *) = (void (*)(struct desc *))dlsym(RTLD_NEXT, "__tgt_unregister_lib");
  (void)d;
  real(&copy);
}

int main(void) {
  int x = 1, on_host = 1;
  printf("devices: %d\n", omp_get_num_devices());
#pragma omp target map(tofrom : x, on_host)
  {
    x++;
    on_host = omp_is_initial_device();
  }
  printf("x=%d on_host=%d\n", x, on_host);
  return 0;
}
