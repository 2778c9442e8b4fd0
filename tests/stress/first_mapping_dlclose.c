// A thread's first mapping meets a dlclose, with the unlucky schedule forced (it once deadlocked).
//
// The hang: thread B maps data under a device's mapping-table lock and, being a fresh thread,
// initialises a thread-local with a destructor for the first time: the C library registers it
// (__cxa_thread_atexit_impl) under the dynamic loader's lock. Thread A meanwhile dlcloses a
// library with its own offload image: it holds the loader lock and its destructor unregisters
// the image, which needs the table lock. Each waits for the other.
//
// This program defines __cxa_thread_atexit_impl itself (exported with -rdynamic, so it comes
// before the C library's). When the offload runtime calls it, the program first lets thread A
// run into dlclose and waits until A has surely taken the loader lock and reached the runtime;
// then it calls the C library's registration. If the runtime holds a lock of its own there that
// unregistration needs, the program hangs; alarm() turns the hang into "DEADLOCK" and exit 3.
// A runtime that registers nothing from under its locks finishes: "provoked=N ok".
//
// usage: first_mapping_dlclose LIBRARY [threads=4]   (LIBRARY: dlopen_register_lib.c's)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*atexit_impl_fn)(void (*)(void *), void *, void *);
static atexit_impl_fn real_atexit_impl;
static atomic_int armed;     // the fresh threads run: provoke at the runtime's next registration
static atomic_int go;        // thread A may dlclose now
static atomic_int closed;    // thread A's dlclose returned
static atomic_int provoked;  // registrations the runtime made
static void *library;

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "DEADLOCK: a lock of the runtime is held across a loader-lock call\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(3);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int __cxa_thread_atexit_impl(void (*dtor)(void *), void *obj, void *dso) {
  void *caller = __builtin_return_address(0);
  Dl_info info;
  if (dladdr(caller, &info) && info.dli_fname && strstr(info.dli_fname, "libomptarget") &&
      atomic_load(&armed) && !atomic_load(&go)) {
    // The runtime registers a thread-local destructor: force the schedule of the hang.
    atomic_fetch_add(&provoked, 1);
    atomic_store(&go, 1);
    for (int i = 0; i < 50 && !atomic_load(&closed); i++) sleep_ms(10);
  }
  if (!real_atexit_impl)
    real_atexit_impl = (atexit_impl_fn)dlsym(RTLD_NEXT, "__cxa_thread_atexit_impl");
  return real_atexit_impl ? real_atexit_impl(dtor, obj, dso) : 0;
}

static void *closer(void *arg) {
  (void)arg;
  while (!atomic_load(&go)) sleep_ms(1);
  dlclose(library);  // the library's destructor unregisters its image
  atomic_store(&closed, 1);
  return NULL;
}

static atomic_int errors;

static void *first_mapping(void *arg) {
  int x = (int)(long)arg;
  // A fresh thread: its first construct creates a new mapping on device 0.
#pragma omp target device(0) map(tofrom : x)
  { x += 1; }
  if (x != (int)(long)arg + 1) atomic_fetch_add(&errors, 1);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s LIBRARY [threads]\n", argv[0]);
    return 2;
  }
  int threads = argc > 2 ? atoi(argv[2]) : 4;
  real_atexit_impl = (atexit_impl_fn)dlsym(RTLD_NEXT, "__cxa_thread_atexit_impl");
  signal(SIGALRM, on_alarm);
  alarm(20);
  if (omp_get_num_devices() < 1) {
    printf("no device\n");
    return 1;
  }
  library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    fprintf(stderr, "dlopen failed: %s\n", dlerror());
    return 2;
  }
  // The library's image is loaded on device 0, so its unregistration visits that device.
  int (*scale)(int, int) = (int (*)(int, int))dlsym(library, "lib_scale");
  if (!scale || scale(5, 0) != 15) {
    fprintf(stderr, "lib_scale failed\n");
    return 2;
  }
  pthread_t a;
  pthread_create(&a, NULL, closer, NULL);
  atomic_store(&armed, 1);
  for (long i = 0; i < threads; i++) {
    pthread_t b;
    pthread_create(&b, NULL, first_mapping, (void *)(i + 1));
    pthread_join(b, NULL);
  }
  atomic_store(&go, 1);  // nothing provoked it: close the library now
  pthread_join(a, NULL);
  printf("provoked=%d errors=%d ok\n", atomic_load(&provoked), atomic_load(&errors));
  return atomic_load(&errors) != 0;
}
