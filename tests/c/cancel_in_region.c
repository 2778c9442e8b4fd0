// HOST-ONLY: a region on the host device runs on the calling thread, where usleep is a cancellation point
// DIVERGENCE: the cancelled region's references are given back as the unwind leaves it; LLVM 19 leaves its data mapped, and a fresh thread whose array lies at the same stack address finds it present, copies nothing in or back, and gets 256 wrong values
// A thread cancelled inside a target region on the host device (deferred cancellation at a
// usleep in the region, and asynchronous cancellation while it spins) ends as cancelled:
// glibc's forced unwind passes through the runtime's frames, which give back what they hold,
// and the constructs after it, on other data and on the same data, run correctly.
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

enum { N = 256 };
static int shared_data[N];

static void *region(void *arg) {
  int async = *(int *)arg;
  int local[N];
  for (int i = 0; i < N; i++) local[i] = i;
  volatile int *started = (volatile int *)arg + 1;
#pragma omp target map(tofrom : local) firstprivate(started, async)
  {
    if (async) pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    *started = 1;
    for (;;) {
      if (!async) usleep(1000);
      for (int i = 0; i < N; i++) local[i] += 1;
    }
  }
  return NULL;
}

// A fresh thread (glibc reuses the cancelled thread's stack, so `local` may lie where the
// cancelled region's data lay) maps its own array: it must be copied in and back.
static void *fresh(void *arg) {
  int local[N];
  for (int i = 0; i < N; i++) local[i] = 3 * i;
#pragma omp target map(tofrom : local)
  for (int i = 0; i < N; i++) local[i] += 1;
  int bad = 0;
  for (int i = 0; i < N; i++) bad += local[i] != 3 * i + 1;
  *(int *)arg = bad;
  return NULL;
}

static int check(int rounds) {
  int bad = 0;
  for (int r = 0; r < rounds; r++) {
    int a[16];
    for (int i = 0; i < 16; i++) a[i] = i;
#pragma omp target map(tofrom : a)
    for (int i = 0; i < 16; i++) a[i] += r;
    for (int i = 0; i < 16; i++) bad += a[i] != i + r;
#pragma omp target map(tofrom : shared_data)
    shared_data[r % N] += 1;
  }
  return bad;
}

int main(void) {
  int bad = check(100);
  for (int async = 0; async < 2; async++) {
    int arg[2] = {async, 0};
    pthread_t t;
    pthread_create(&t, NULL, region, arg);
    while (!((volatile int *)arg)[1]) usleep(1000);
    pthread_cancel(t);
    void *result = NULL;
    pthread_join(t, &result);
    int fresh_bad = -1;
    pthread_create(&t, NULL, fresh, &fresh_bad);
    pthread_join(t, NULL);
    printf("%s cancellation: thread cancelled %d, a fresh thread's region %d wrong\n",
           async ? "asynchronous" : "deferred", result == PTHREAD_CANCELED, fresh_bad);
    bad += check(4000);
  }
  int sum = 0;
  for (int i = 0; i < N; i++) sum += shared_data[i];
  printf("8100 constructs after: %d wrong, shared sum %d\n", bad, sum);
  return 0;
}
