// One array mapped `tofrom` by two constructs whose regions overlap in time, each writing
// its own half on the device: A's kernel runs ~200 ms and writes its half at the end; B
// starts ~50 ms after A, while A's region is still running, and is quick. Under OpenMP
// (5.2 §5.8.3) A's region has not ended when B maps the array, so the array is present:
// either B shares A's device copy and the last region to end copies back both halves, or
// (an implementation that makes B wait for A's end, which nothing forbids) B copies in
// what A copied back. Either way the host ends with both halves. A runtime that lets B map
// the array anew before A's copy back has landed copies in the old half A, and A's copy
// back, landing last, writes back the old half B: a half lost.
// Cases: two host threads with blocking regions; two `nowait` target tasks of one thread;
// two threads where B maps with `target enter data` / `exit data`.
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#define N 4096
#define HALF (N / 2)

static int a[N];

static void reset(void) {
  for (int i = 0; i < N; ++i) a[i] = 0;
}

// Counts the elements of each half that hold the value written there.
static int check(const char *what) {
  int lo = 0, hi = 0;
  for (int i = 0; i < HALF; ++i) lo += a[i] == 1;
  for (int i = HALF; i < N; ++i) hi += a[i] == 2;
  printf("%s: half A %d of %d, half B %d of %d\n", what, lo, HALF, hi, HALF);
  return lo != HALF || hi != HALF;
}

// Region A: spins ~200 ms on the device, then writes half A.
static void region_a(void) {
#pragma omp target map(tofrom : a[0:N])
  {
    double t0 = omp_get_wtime();
    while (omp_get_wtime() - t0 < 0.2) {
    }
    for (int i = 0; i < HALF; ++i) a[i] = 1;
  }
}

static void region_b(void) {
#pragma omp target map(tofrom : a[0:N])
  for (int i = HALF; i < N; ++i) a[i] = 2;
}

int main(void) {
  int errors = 0;

  reset();
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) {
      region_a();
    } else {
      usleep(50000);
      region_b();
    }
  }
  errors += check("two threads, blocking regions");

  reset();
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task
    region_a();
    usleep(50000);
#pragma omp target map(tofrom : a[0:N]) nowait
    for (int i = HALF; i < N; ++i) a[i] = 2;
#pragma omp taskwait
  }
  errors += check("one thread, a blocking task and a nowait region");

  reset();
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp target map(tofrom : a[0:N]) nowait
    {
      double t0 = omp_get_wtime();
      while (omp_get_wtime() - t0 < 0.2) {
      }
      for (int i = 0; i < HALF; ++i) a[i] = 1;
    }
    usleep(50000);
#pragma omp target map(tofrom : a[0:N]) nowait
    for (int i = HALF; i < N; ++i) a[i] = 2;
#pragma omp taskwait
  }
  errors += check("two nowait regions");

  reset();
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) {
      region_a();
    } else {
      usleep(50000);
#pragma omp target enter data map(to : a[0:N])
#pragma omp target
      for (int i = HALF; i < N; ++i) a[i] = 2;
#pragma omp target exit data map(from : a[0:N])
    }
  }
  errors += check("two threads, B with enter and exit data");

  printf("%s\n", errors ? "FAIL" : "PASS");
  return errors != 0;
}
