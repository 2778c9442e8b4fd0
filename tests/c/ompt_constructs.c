// GPU-UNCOMPARED: LLVM 19's bundled runtime sends the tool no target callbacks on the GPU
// TOOL: ompt_tool.c
// OMPT callbacks (EMI) of every construct kind, compared with LLVM 19's: target regions with
// each map type, scalars by value, first-private arrays (packed into one buffer, as LLVM
// does), enter/exit data (alloc, to, from, release, delete,
// always), update to/from, target data with a nested region and use_device_ptr, a declare
// target global, a pointer attached inside a struct, teams with and without num_teams, a
// second device and the initial device (no callbacks: the region runs on the host). The
// tool prints one line per callback (see ompt_tool.c for the names it prints).
#include <omp.h>
#include <stdio.h>

#pragma omp declare target
int g[8];
#pragma omp end declare target

struct S {
  int *p;
  int n;
};

int main(void) {
  int a[16], b[4] = {0}, c[4] = {0}, x = 3;
  for (int i = 0; i < 16; i++) a[i] = i;
  int errors = 0;

  printf("-- target map(tofrom, to, from, alloc) and a scalar by value\n");
#pragma omp target map(tofrom : a) map(to : b) map(from : c) map(alloc : x) firstprivate(errors)
  {
    a[0] += b[0] + errors;
    // Every element of the map(from) array is written: the copy back reads all of it
    // (compute-sanitizer initcheck reports an element the kernel leaves unwritten).
    for (int i = 0; i < 4; i++)
      c[i] = 5 - i;
  }

  printf("-- first-private arrays\n");
  int f1[4] = {1, 2, 3, 4}, f2[2] = {5, 6};
#pragma omp target firstprivate(f1, f2) map(tofrom : x)
  { x = f1[3] + f2[1] - 7; }

  printf("-- enter data (to, alloc), update to/from, exit data (from, release, delete)\n");
#pragma omp target enter data map(to : a) map(alloc : c)
#pragma omp target update to(a[2:4])
#pragma omp target update from(a)
#pragma omp target exit data map(from : a) map(release : c)
#pragma omp target enter data map(to : b)
#pragma omp target exit data map(delete : b)

  printf("-- always modifiers on a present mapping\n");
#pragma omp target enter data map(to : a)
#pragma omp target map(always, tofrom : a)
  { a[1] = 7; }
#pragma omp target exit data map(always, from : a) map(delete : a)

  printf("-- target data with a nested region and use_device_ptr\n");
  int *pa = a;
#pragma omp target data map(tofrom : a) use_device_ptr(pa)
  {
#pragma omp target map(tofrom : a)
    { a[2] = 9; }
    printf("   device pointer %s\n", pa != a ? "differs" : "is the host's");
  }

  printf("-- declare target global\n");
#pragma omp target map(tofrom : g)
  { g[0] = 11; }
#pragma omp target update from(g)

  printf("-- pointer attached inside a struct\n");
  struct S s = {a, 16};
#pragma omp target map(to : s) map(tofrom : s.p[0 : 4])
  { s.p[3] = 13; }

  printf("-- teams\n");
#pragma omp target teams map(tofrom : x)
  {
    if (omp_get_team_num() == 0) x = 1;
  }
#pragma omp target teams num_teams(3) map(tofrom : x)
  {
    if (omp_get_team_num() == 0) x = 2;
  }

  printf("-- device 1 and the initial device\n");
  if (omp_get_num_devices() > 1) {
#pragma omp target device(1) map(tofrom : x)
    { x += 1; }
  } else {
    printf("   (one device)\n");
  }
  int host = omp_get_initial_device();
#pragma omp target device(host) map(tofrom : x)
  { x += 1; }

  printf("a[0..3]=%d %d %d %d c[0]=%d g[0]=%d x=%d\n", a[0], a[1], a[2], a[3], c[0], g[0], x);
  return 0;
}
