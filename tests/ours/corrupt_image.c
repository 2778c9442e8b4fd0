// A device image corrupted before registration, then a region from it: the runtime must refuse
// the image with a message instead of handing it to the loader (LLVM 19 and, before, ours died
// in dlopen with SIGBUS on a truncated image). Run by crates/abi/tests/corrupt_images.rs.
//
// The program interposes its own __tgt_register_lib (the executable's symbol comes first) and
// registers a copy of its device image, changed as CORRUPT says:
//   truncate  the raw ELF image cut in half (inside its loadable segments)
//   reloc     the first relocation's target moved far outside the image
//   segment   the first loadable segment's file size made larger than the file
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct image { void *start, *end, *entries_begin, *entries_end; };
struct desc { int32_t n; struct image *images; void *entries_begin, *entries_end; };

static struct desc copy;
static struct image copy_image;

static const char *mode(void) {
  const char *m = getenv("CORRUPT");
  return m ? m : "truncate";
}

static uint64_t u64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static void set_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

void __tgt_register_lib(struct desc *d) {
  void (*real)(struct desc *) = (void (*)(struct desc *))dlsym(RTLD_NEXT, "__tgt_register_lib");
  copy = *d;
  copy_image = d->images[0];
  size_t size = (char *)copy_image.end - (char *)copy_image.start;
  unsigned char *bytes = malloc(size);
  memcpy(bytes, copy_image.start, size);
  unsigned char *elf = memmem(bytes, size, "\x7f" "ELF", 4); /* inside the OffloadBinary */
  size_t elf_size = size - (size_t)(elf - bytes);
  uint64_t phoff = u64(elf + 32), shoff = u64(elf + 40);
  uint16_t phnum, shnum;
  memcpy(&phnum, elf + 56, 2);
  memcpy(&shnum, elf + 60, 2);
  copy_image.start = elf;
  copy_image.end = elf + elf_size;
  if (strcmp(mode(), "truncate") == 0) {
    copy_image.end = elf + elf_size / 2;
  } else if (strcmp(mode(), "segment") == 0) {
    for (int i = 0; i < phnum; i++) {
      unsigned char *ph = elf + phoff + 56 * i;
      if (ph[0] == 1) { /* PT_LOAD: file and memory size past the end of the file */
        set_u64(ph + 32, u64(ph + 32) + (1u << 20));
        set_u64(ph + 40, u64(ph + 40) + (1u << 20));
        break;
      }
    }
  } else if (strcmp(mode(), "reloc") == 0) {
    for (int i = 0; i < shnum; i++) {
      unsigned char *sh = elf + shoff + 64 * i;
      uint32_t type;
      memcpy(&type, sh + 4, 4);
      if (type == 4) { /* SHT_RELA: the first relocation writes 1 TiB away */
        unsigned char *rela = elf + u64(sh + 24);
        set_u64(rela, u64(rela) + ((uint64_t)1 << 40));
        break;
      }
    }
  }
  copy.images = &copy_image;
  real(&copy);
}

void __tgt_unregister_lib(struct desc *d) {
  void (*real)(struct desc *) = (void (*)(struct desc *))dlsym(RTLD_NEXT, "__tgt_unregister_lib");
  (void)d;
  real(&copy);
}

int main(void) {
  int x = 1;
  printf("running a region from a corrupt image (%s)\n", mode());
  fflush(stdout);
#pragma omp target map(tofrom : x)
  x++;
  printf("not reached: x=%d\n", x);
  return 0;
}
