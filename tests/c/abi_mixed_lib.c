// Shared library of abi_mixed_clang19_lib.c and abi_mixed_clang22_lib.c, built by the other
// compiler than the program: its constructs use that compiler's ABI (clang 19: 32-byte entries,
// PTR_AND_OBJ pointer maps; clang 22: 56-byte entries, ATTACH maps) on the same device data.
#include <omp.h>

struct vec {
  int n;
  int *data;
};

#pragma omp declare target
int lib_counter = 100;
#pragma omp end declare target

/* Needs the caller's mapping of a[0:n] ('present'). */
int lib_sum_present(int *a, int n) {
  int s = 0;
#pragma omp target map(present, to : a[0:n]) map(tofrom : s)
  for (int i = 0; i < n; i++) s += a[i];
  return s;
}

/* Reads v->data[i] through the device copy of *v, which the caller mapped and attached;
   *attached says whether that copy points at the device copy of the data (on the host device
   a pointer left unattached would still read the host's data). */
int lib_read_attached(struct vec *v, int i, int *attached) {
  int r = -1, a = 0;
  void *mapped = omp_get_mapped_ptr(v->data, omp_get_default_device());
#pragma omp target map(present, alloc : v[0:1]) map(from : r, a)
  {
    r = v->data[i];
    a = (void *)v->data == mapped;
  }
  *attached = a;
  return r;
}

/* Maps a struct and its pointee (attaching the device pointer) for the caller to use. */
void lib_enter_vec(struct vec *v) {
#pragma omp target enter data map(to : v[0:1]) map(to : v->data[0:v->n])
}

void lib_exit_vec(struct vec *v) {
#pragma omp target exit data map(from : v->data[0:v->n]) map(release : v[0:1])
}

int lib_num_devices(void) { return omp_get_num_devices(); }

int lib_bump_counter(void) {
  int r = 0;
#pragma omp target map(from : r)
  {
    lib_counter += 1;
    r = lib_counter;
  }
  return r;
}
