// Shared library for dlopen_register.c: it carries its own offload image (a target region
// and a declare target global), so every dlopen registers it (__tgt_register_lib from its
// constructor, under the dynamic loader's lock) and every dlclose unregisters it.
#pragma omp declare target
int lib_table[4] = {1, 2, 3, 4};
#pragma omp end declare target

int lib_scale(int x, int device) {
  int r = 0;
#pragma omp target device(device) map(from : r) map(to : x)
  { r = x * lib_table[2]; }
  return r;
}
