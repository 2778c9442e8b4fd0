// The program exits while a construct of its own is in flight where no other thread can ever
// finish it: the exit must not wait for it (LLVM 19 exits at once). Each mode checks that a
// region still runs correctly first.
//
// usage: exit_from_region inside|signal|longjmp|fork
//   inside:  exit(0) called inside a target region (the host device runs it on this thread)
//   signal:  exit(0) called by a signal handler that interrupted a target region
//   longjmp: a region left by longjmp (the construct never returns), then exit(0)
//   fork:    a child forked while another thread is inside a region exits at once (that
//            thread does not exist in the child)
#include <omp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static jmp_buf back;
static volatile int in_region;

static void leave(void) { longjmp(back, 1); }

static void on_signal(int sig) {
  (void)sig;
  exit(0);
}

static int check(void) {
  int a[64];
  for (int i = 0; i < 64; i++) a[i] = i;
#pragma omp target map(tofrom : a)
  for (int i = 0; i < 64; i++) a[i] *= 2;
  for (int i = 0; i < 64; i++)
    if (a[i] != 2 * i) return 1;
  return 0;
}

static void *long_region(void *arg) {
  (void)arg;
  // The host device's image has its own copy of globals: the region reaches the program's
  // flag through its address.
  volatile int *flag = &in_region;
#pragma omp target firstprivate(flag)
  {
    *flag = 1;
    // About a second inside the region.
    for (int i = 0; i < 100; i++) usleep(10000);
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "inside";
  if (check()) {
    printf("wrong result\n");
    return 1;
  }
  printf("checked\n");
  fflush(stdout);
  if (!strcmp(mode, "inside")) {
#pragma omp target
    exit(0);
  } else if (!strcmp(mode, "signal")) {
    signal(SIGUSR1, on_signal);
#pragma omp target
    raise(SIGUSR1);
  } else if (!strcmp(mode, "longjmp")) {
    // The host device's region runs on this thread, in this process: a host function
    // pointer is callable there.
    void (*f)(void) = leave;
    if (!setjmp(back)) {
#pragma omp target firstprivate(f)
      f();
    }
    exit(0);
  } else if (!strcmp(mode, "fork")) {
    pthread_t t;
    pthread_create(&t, NULL, long_region, NULL);
    while (!in_region) usleep(1000);
    pid_t child = fork();
    if (child == 0) exit(0);
    int status = 0;
    waitpid(child, &status, 0);
    pthread_join(t, NULL);
    printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
  }
  return 2;
}
