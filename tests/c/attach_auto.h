/* Shared by attach_auto.c and attach_auto_as_always.c: when does mapping a pointer's section
   point the device copy of the pointer at the device copy of its pointee? clang 22 emits an
   ATTACH entry, which LLVM 22 performs only when the pointer or the pointee is newly mapped by
   the construct (or attach is "always"); clang 19's PTR_AND_OBJ entry attaches every time. */
#include <omp.h>
#include <stdio.h>

/* The device copy of the pointer `*host_ptr`, read back from the device. */
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

int main(void) {
  int dev = omp_get_default_device();
  int a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  int *p = a;

  /* 1. the pointer is mapped first, then its section: the pointee is new */
#pragma omp target enter data map(to : p)
  printf("1 pointer alone:                 %s\n", state((void **)&p, a, dev));
#pragma omp target enter data map(to : p[0:4])
  printf("1 then its section (new pointee): %s\n", state((void **)&p, a, dev));
#pragma omp target exit data map(release : p[0:4]) map(release : p)

  /* 2. pointee and pointer both mapped before the section: nothing new */
#pragma omp target enter data map(to : b)
  p = b;
#pragma omp target enter data map(to : p)
  printf("2 pointer and pointee mapped:    %s\n", state((void **)&p, b, dev));
#pragma omp target enter data map(to : p[0:4])
  printf("2 then its section (none new):   %s\n", state((void **)&p, b, dev));
#pragma omp target exit data map(release : p[0:4])
  /* ATTACH never counts references: b and p are still mapped once each */
  printf("2 after releasing the section:   b present=%d p present=%d\n",
         omp_target_is_present(b, dev), omp_target_is_present(&p, dev));
#pragma omp target exit data map(release : p) map(release : b)
  printf("2 after releasing both:          b present=%d p present=%d\n",
         omp_target_is_present(b, dev), omp_target_is_present(&p, dev));

  /* 3. a target region whose section is already mapped: the kernel still sees the device
     pointee (the pointer passed to the kernel is translated, attached or not) */
  p = a;
#pragma omp target enter data map(to : a) map(to : p)
  int seen = -1;
#pragma omp target map(tofrom : p[0:4]) map(from : seen)
  { seen = p[2]; p[2] = 30; }
  printf("3 region read %d, device pointer %s\n", seen, state((void **)&p, a, dev));
#pragma omp target exit data map(from : a) map(release : p)
  printf("3 a[2]=%d\n", a[2]);
  return 0;
}
