// A kernel that faults, differential: what a program with a bug in a target region sees. Each
// case runs in a child (the program runs itself again, so each starts the runtime afresh; a
// GPU context is unusable after a fault) and the parent prints how it ended. On a GPU the
// driver reports the fault when the construct synchronises (a store through an address no
// allocation holds: an illegal address; a trap: a launch failure), the runtime prints LLVM's
// lines with the driver's reason and the offload policy ends the program (signal 6), for a
// blocking region and for a `nowait` one whose task waits. A failed `assert` in a region ends
// the program on either device (the GPU's device runtime prints the assertion, then traps).
// On the host device the other cases skip the faulting statement and end normally: the same
// binary under both runtimes, whatever the device. What is compared is how each child ends and
// what it printed (a GPU's device printf, the assertion's line, reaches stdout), not the
// runtime's error lines: which driver call first meets the fault depends on how far the
// kernel got when the runtime queued its next work (crates/abi/tests/kernels_cuda_fake.rs
// checks ours on that path without a GPU).
#include <assert.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "on_gpu.h"

#pragma omp declare target
// An address no allocation holds (the first page), through a volatile pointer so the store
// stays.
static void wild_store(int v) {
  if (compiled_for_gpu()) *(volatile int *)(uintptr_t)(64 + v % 8) = v;
}
static void trap_on_gpu(void) {
  if (compiled_for_gpu()) __builtin_trap();
}
#pragma omp end declare target

static int child(const char *c) {
  int x = 1;
  printf("  %s: start\n", c);
  fflush(stdout);
  if (!strcmp(c, "store")) {
#pragma omp target map(tofrom : x)
    {
      wild_store(x);
      x = 2;
    }
  } else if (!strcmp(c, "trap")) {
#pragma omp target map(tofrom : x)
    {
      trap_on_gpu();
      x = 2;
    }
  } else if (!strcmp(c, "nowait")) {
    int r[4] = {0, 0, 0, 0};
#pragma omp parallel num_threads(2)
#pragma omp single
    {
      for (int t = 0; t < 4; t++) {
#pragma omp target map(tofrom : r[t : 1]) nowait
        {
          if (t == 2) wild_store(t);
          r[t] = t + 10;
        }
      }
#pragma omp taskwait
    }
    x = r[0] + r[1] + r[3];
  } else if (!strcmp(c, "assert")) {
#pragma omp target map(tofrom : x)
    {
      assert(x == 0);
      x = 2;
    }
  }
  printf("  %s: after the region, x=%d\n", c, x);
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 2 && !strcmp(argv[1], "child")) return child(argv[2]);
  // The parent touches no OpenMP routine and starts no region.
  const char *cases[] = {"store", "trap", "nowait", "assert"};
  for (unsigned i = 0; i < sizeof cases / sizeof *cases; i++) {
    printf("%s\n", cases[i]);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      execl("/proc/self/exe", argv[0], "child", cases[i], (char *)NULL);
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) printf("  -> exit %d\n", WEXITSTATUS(status));
    else printf("  -> signal %d\n", WTERMSIG(status));
    fflush(stdout);
  }
  return 0;
}
