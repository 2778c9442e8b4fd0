// STDERR
// The environment that selects where regions run, differential: the program runs itself once
// per value of OMP_TARGET_OFFLOAD (every spelling: upper, lower and mixed case, unknown, empty)
// and of OMP_DEFAULT_DEVICE (each device number around the device count, negative, not a
// number), and each run prints what a program sees: the device count, the default and initial
// devices, whether a region ran on the initial device, whether mapped data is present. A
// different answer here silently moves a program's regions to the host (or off it).
// Device numbers are printed relative to the device count, so the lines do not depend on it.
// With offloading disabled only where the region ran is printed: LLVM 19 still counts devices
// then (docs/DIVERGENCES.md 10, offload_disabled.c), so the rest is no rule to compare.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *rel(int d, int n) {
  static char buf[32];
  if (d == n) return "ndev";
  if (d > n) snprintf(buf, sizeof buf, "ndev+%d", d - n);
  else snprintf(buf, sizeof buf, "%d", d);
  return buf;
}

static int child(int where_only) {
  if (where_only) {
    int on_initial = -1;
#pragma omp target map(from : on_initial)
    on_initial = omp_is_initial_device();
    printf("  region ran on the initial device: %d\n", on_initial);
    return 0;
  }
  int n = omp_get_num_devices();
  printf("  devices: %s\n", n > 0 ? "some" : "none");
  printf("  default device: %s\n", rel(omp_get_default_device(), n));
  printf("  initial device: %s\n", rel(omp_get_initial_device(), n));
  fflush(stdout);
  int on_initial = -1;
#pragma omp target map(from : on_initial)
  on_initial = omp_is_initial_device();
  printf("  region ran on the initial device: %d\n", on_initial);
  fflush(stdout);
  static int a[8];
#pragma omp target data map(tofrom : a)
  {
    printf("  mapped data present on the default device: %d\n",
           omp_target_is_present(a, omp_get_default_device()));
  }
  fflush(stdout);
  return 0;
}

static void run(char **argv, const char *var, const char *value) {
  if (value) printf("%s='%s'\n", var, value);
  else printf("%s unset\n", var);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    if (value) setenv(var, value, 1);
    else unsetenv(var);
    int where_only = value && !strcmp(var, "OMP_TARGET_OFFLOAD") && (value[0] == 'D' || value[0] == 'd') &&
                     (value[1] == 'I' || value[1] == 'i');
    execl("/proc/self/exe", argv[0], where_only ? "where" : "child", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) printf("  -> exit %d\n", WEXITSTATUS(status));
  else printf("  -> signal %d\n", WTERMSIG(status));
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "child")) return child(0);
  if (argc > 1 && !strcmp(argv[1], "where")) return child(1);
  // The parent touches no OpenMP routine: each child starts the runtime afresh.
  unsetenv("OMP_DEFAULT_DEVICE");
  const char *offload[] = {NULL, "MANDATORY", "mandatory", "Mandatory", "DISABLED", "disabled",
                           "DEFAULT", "default", "garbage", ""};
  for (size_t i = 0; i < sizeof offload / sizeof *offload; i++)
    run(argv, "OMP_TARGET_OFFLOAD", offload[i]);
  unsetenv("OMP_TARGET_OFFLOAD");
  const char *defdev[] = {"0", "1", "-1", "-2", "99", "x", ""};
  for (size_t i = 0; i < sizeof defdev / sizeof *defdev; i++)
    run(argv, "OMP_DEFAULT_DEVICE", defdev[i]);
  setenv("OMP_TARGET_OFFLOAD", "MANDATORY", 1);
  for (size_t i = 0; i < sizeof defdev / sizeof *defdev; i++)
    run(argv, "OMP_DEFAULT_DEVICE", defdev[i]);
  return 0;
}
