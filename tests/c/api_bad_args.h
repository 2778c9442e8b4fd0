// Device memory routines and constructs with every kind of device number, differential:
// each case runs in a forked child (a fatal error ends only that child), which prints what
// the call returned; the parent prints how the child ended. Under LLVM's runtime and ours the
// lines, and the error messages on stderr, must be the same case by case.
//
// Device numbers: -10, omp_invalid_device (-2), omp_initial_device (-1), 0, the initial
// device's number (omp_get_num_devices()), one past it, INT_MAX. Printed symbolically, so the
// output does not depend on the machine's device count. Pointers are printed as null or not.
//
// Each program including this defines its policy through `// ENV: OMP_TARGET_OFFLOAD=...`.
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int ndev;
static const char *dev_names[] = {"-10", "invalid", "initial(-1)", "0", "ndev", "ndev+1", "INT_MAX"};
static int dev_value(int k) {
  switch (k) {
  case 0: return -10;
  case 1: return -2;
  case 2: return -1;
  case 3: return 0;
  case 4: return ndev;
  case 5: return ndev + 1;
  default: return INT_MAX;
  }
}
#define NDEVS 7

// A device number the program may use for memory of its own (a real device, else the host).
static int usable(int d) { return d >= 0 && d <= ndev; }

static int x[16];
static char host_buf[64];

// Each line is flushed at once: a fatal error later in the case must not lose it.
static void p(const char *what, const void *ptr) {
  printf("  %s: %s\n", what, ptr ? "ptr" : "null");
  fflush(stdout);
}
static void i(const char *what, long v) {
  printf("  %s: %ld\n", what, v);
  fflush(stdout);
}

// Case c with device number d. Returns 0 when the case does not exist (end of the list).
static int body(int c, int d) {
  int host = omp_get_initial_device();
  switch (c) {
  case 0: {
    void *q = omp_target_alloc(64, d);
    p("omp_target_alloc(64)", q);
    if (q) omp_target_free(q, d);
    return 1;
  }
  case 1: {
    void *q = omp_target_alloc(0, d);
    p("omp_target_alloc(0)", q);
    if (q) omp_target_free(q, d);
    return 1;
  }
  case 2:
    omp_target_free(NULL, d);
    i("omp_target_free(NULL) returned", 0);
    return 1;
  case 3:
    i("omp_target_is_present(unmapped)", omp_target_is_present(x, d));
    return 1;
  case 4:
    i("omp_target_is_present(NULL)", omp_target_is_present(NULL, d));
    return 1;
  case 5:
#if __clang_major__ >= 22
    // Whether a non-host device reaches host memory depends on the device (and LLVM 22's
    // host plugin says no where OpenMP says yes: api_target_is_accessible.c): asked with a
    // null pointer there.
    i("omp_target_is_accessible(host or null, 4)",
      omp_target_is_accessible(d >= 0 && d < ndev ? NULL : (void *)x, 4, d));
#else
    i("omp_target_is_accessible: not in LLVM 19's runtime", 0);
#endif
    return 1;
  case 6: {
    void *q = omp_get_mapped_ptr(x, d);
    p("omp_get_mapped_ptr(unmapped)", q);
    i("  ... is the host address", q == (void *)x);
    return 1;
  }
  case 7: {
    // The destination on device d (its own memory where d is usable), the source on the host.
    void *dst = usable(d) ? omp_target_alloc(16, d) : host_buf;
    i("omp_target_memcpy(d <- host)", omp_target_memcpy(dst, x, 16, 0, 0, d, host));
    if (usable(d) && dst) omp_target_free(dst, d);
    return 1;
  }
  case 8: {
    void *src = usable(d) ? omp_target_alloc(16, d) : host_buf;
    i("omp_target_memcpy(host <- d)", omp_target_memcpy(x, src, 16, 0, 0, host, d));
    if (usable(d) && src) omp_target_free(src, d);
    return 1;
  }
  case 9: {
    void *dst = usable(d) ? omp_target_alloc(16, d) : host_buf;
    size_t vol[1] = {16}, off[1] = {0}, dims[1] = {64};
    i("omp_target_memcpy_rect(d <- host)",
      omp_target_memcpy_rect(dst, x, 1, 1, vol, off, off, dims, dims, d, host));
    if (usable(d) && dst) omp_target_free(dst, d);
    return 1;
  }
  case 10: {
    void *dst = usable(d) ? omp_target_alloc(16, d) : host_buf;
    // Printed after the copy completed: LLVM's copy runs in a task, which may fail before or
    // after the routine returns.
    int r = omp_target_memcpy_async(dst, x, 16, 0, 0, d, host, 0, NULL);
#pragma omp taskwait
    i("omp_target_memcpy_async(d <- host)", r);
    if (usable(d) && dst) omp_target_free(dst, d);
    return 1;
  }
  case 11: {
    void *q = usable(d) ? omp_target_alloc(16, d) : host_buf;
    void *r = omp_target_memset(q, 0, 16, d);
    p("omp_target_memset", r);
    i("  ... returned its pointer", r == q);
    if (usable(d) && q) omp_target_free(q, d);
    return 1;
  }
  case 12: {
    void *q = usable(d) ? omp_target_alloc(16, d) : host_buf;
    i("omp_target_associate_ptr", omp_target_associate_ptr(x, q, 16, 0, d));
    i("omp_target_disassociate_ptr", omp_target_disassociate_ptr(x, d));
    if (usable(d) && q) omp_target_free(q, d);
    return 1;
  }
  case 13:
    i("omp_target_disassociate_ptr(never associated)", omp_target_disassociate_ptr(x, d));
    return 1;
  case 14: {
    int ran = 0;
#pragma omp target device(d) map(tofrom : ran)
    ran = 1;
    i("target device(d): ran", ran);
    return 1;
  }
  case 15: {
    x[0] = 7;
#pragma omp target enter data device(d) map(to : x[0:4])
    i("enter data: present", omp_target_is_present(x, d));
#pragma omp target exit data device(d) map(delete : x[0:4])
    i("exit data: present", omp_target_is_present(x, d));
    return 1;
  }
  case 16: {
#pragma omp target data device(d) map(tofrom : x[0:4])
    { i("target data: present inside", omp_target_is_present(x, d)); }
    return 1;
  }
  case 17: {
#pragma omp target update device(d) to(x[0:4])
    i("target update of unmapped data: returned", 1);
    return 1;
  }
  case 18: {
    omp_set_default_device(d);
    i("omp_get_default_device", omp_get_default_device() == d);
    int ran = 0;
#pragma omp target map(tofrom : ran)
    ran = 1;
    i("target on the default device: ran", ran);
    return 1;
  }
  case 19: {
    int ran = 0;
#pragma omp target nowait device(d) map(tofrom : ran)
    ran = 1;
#pragma omp taskwait
    i("target nowait device(d): ran", ran);
    return 1;
  }
  default:
    return 0;
  }
}

int main(void) {
  ndev = omp_get_num_devices();
  printf("devices: %s\n", ndev > 0 ? "some" : "none");
  for (int c = 0;; c++) {
    int more = 0;
    for (int k = 0; k < NDEVS; k++) {
      printf("case %d, device %s\n", c, dev_names[k]);
      fflush(stdout);
      fflush(stderr);
      pid_t child = fork();
      if (child == 0) {
        int exists = body(c, dev_value(k));
        fflush(stdout);
        fflush(stderr);
        _exit(exists ? 0 : 99);
      }
      int status = 0;
      waitpid(child, &status, 0);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 99) break;
      more = 1;
      if (WIFEXITED(status))
        printf("  -> exit %d\n", WEXITSTATUS(status));
      else
        printf("  -> signal %d\n", WTERMSIG(status));
    }
    if (!more) break;
  }
  return 0;
}
