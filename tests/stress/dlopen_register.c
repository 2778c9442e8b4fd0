// Registration while constructs run: half the threads dlopen a library that carries its own
// offload image, call its target region and dlclose it, in a loop; the other half run target
// regions of the program's own image until the loaders are done. Registration happens under
// the dynamic loader's lock (the library's constructor), so the runtime must never hold a lock
// that registration needs while it calls something that takes the loader lock (dlopen of a
// device image, dlsym, dlclose).
//
// usage: dlopen_register LIBRARY [threads=8] [cycles=1000]   (cycles: dlopen/dlclose in all)
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static const char *library;
static int cycles_per_loader;
static atomic_int loaders_left;
static atomic_int errors;

static void *loader(void *arg) {
  int id = (int)(long)arg;
  int devices = omp_get_num_devices();
  for (int i = 0; i < cycles_per_loader; i++) {
    void *h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      fprintf(stderr, "dlopen failed: %s\n", dlerror());
      exit(2);
    }
    int (*scale)(int, int) = (int (*)(int, int))dlsym(h, "lib_scale");
    if (!scale || scale(i, (id + i) % devices) != 3 * i) atomic_fetch_add(&errors, 1);
    dlclose(h);
  }
  atomic_fetch_sub(&loaders_left, 1);
  return NULL;
}

static void *worker(void *arg) {
  int id = (int)(long)arg;
  int devices = omp_get_num_devices();
  long n = 0;
  while (atomic_load(&loaders_left) > 0) {
    int x = id;
#pragma omp target device((int)(n % devices)) map(tofrom : x)
    { x += 1; }
    if (x != id + 1) atomic_fetch_add(&errors, 1);
    n++;
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s LIBRARY [threads] [cycles]\n", argv[0]);
    return 2;
  }
  library = argv[1];
  int threads = argc > 2 ? atoi(argv[2]) : 8;
  int cycles = argc > 3 ? atoi(argv[3]) : 1000;
  if (threads < 2) threads = 2;
  int loaders = threads / 2;
  cycles_per_loader = (cycles + loaders - 1) / loaders;
  atomic_store(&loaders_left, loaders);
  pthread_t t[threads];
  for (long i = 0; i < threads; i++)
    pthread_create(&t[i], NULL, i % 2 ? worker : loader, (void *)i);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  printf("threads=%d cycles=%d errors=%d\n", threads, loaders * cycles_per_loader,
         atomic_load(&errors));
  return atomic_load(&errors) != 0;
}
