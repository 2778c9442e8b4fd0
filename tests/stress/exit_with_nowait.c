// The program exits while `target nowait` constructs are in flight: LLVM 19
// crashes (in-flight tasks run kernels of images already unloaded, or find their mappings
// gone); the runtime must drain or cancel them so that the program ends cleanly.
//
// usage: exit_with_nowait return|exit|thread
//   return: main returns while 8 nowait regions run
//   exit:   main calls exit(0) while they run
//   thread: another thread calls exit(0) while they run (main waits for that thread)
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N (1 << 16)
static double a[8][N];

static void issue(int t) {
#pragma omp target nowait map(tofrom : a[t][0:N]) firstprivate(t)
  {
    for (int r = 0; r < 100; r++)
      for (int i = 0; i < N; i++) a[t][i] += 1.0 + r * 1e-9 * i;
  }
}

static void *exiter(void *arg) {
  (void)arg;
  struct timespec ts = {0, 5 * 1000000L};
  nanosleep(&ts, NULL);
  printf("exit from another thread\n");
  fflush(stdout);
  exit(0);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "return";
  for (int t = 0; t < 8; t++) issue(t);
  printf("issued\n");
  fflush(stdout);
  if (!strcmp(mode, "exit")) exit(0);
  if (!strcmp(mode, "thread")) {
    // Another thread exits while the regions run; this one waits for it (for ever: exit
    // ends the process). libomp itself cannot take new tasks while it shuts down, so this
    // thread issues none meanwhile.
    pthread_t t;
    pthread_create(&t, NULL, exiter, NULL);
    pthread_join(t, NULL);
  }
  return 0;
}
