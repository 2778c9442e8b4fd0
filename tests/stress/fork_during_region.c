// A child forked while another thread of the parent is inside a target region (a kernel of
// about a second on a GPU, or on the host device) exits at once and cleanly: that thread does
// not exist in the child, and the child never used the device. The parent's region completes
// correctly. On a GPU the child inherits the parent's CUDA state, which it must not touch.
//
// usage: fork_during_region
// prints: child exited STATUS after MS ms; region ok|wrong
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int result;

static void *long_region(void *arg) {
  (void)arg;
  int r = 0;
#pragma omp target map(from : r)
  {
    double t0 = omp_get_wtime();
    long n = 0;
    while (omp_get_wtime() - t0 < 1.0) n++;
    r = n > 0 ? 42 : 1;
  }
  result = r;
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
  // The device is initialised and the image loaded before the fork.
  int a = 1;
#pragma omp target map(tofrom : a)
  a += 1;
  pthread_t t;
  pthread_create(&t, NULL, long_region, NULL);
  usleep(300 * 1000);  // the region runs now
  double t0 = now();
  pid_t child = fork();
  if (child == 0) exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  double ms = (now() - t0) * 1e3;
  pthread_join(t, NULL);
  printf("child exited %d after %s; region %s\n",
         WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
         ms < 500 ? "under 500 ms" : "500 ms or more", a == 2 && result == 42 ? "ok" : "wrong");
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0 && ms < 500 && a == 2 && result == 42);
}
