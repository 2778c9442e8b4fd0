// GPU-UNCOMPARED: LLVM 19's bundled runtime sends the tool no target callbacks on the GPU (ompt_fields_nowait.c runs every construct of this program there, compared with ours on the host device)
// TOOL: ompt_fields_tool.c
// Every argument of every target-related OMPT callback (EMI), compared with LLVM 19's and
// LLVM 22's: construct kinds, module ids, the tool's words handed back (target_data,
// target_task_data, host_op_id), device numbers, return addresses, what libomp's
// ompt_get_target_info and ompt_get_num_devices answer. Constructs: target (maps of each
// kind, depend, teams with num_teams), target enter data, target update, target exit data
// (each also with depend), target data with a region inside, and the device memory routines
// (alloc, memcpy both ways, associate, a region on the associated memory, disassociate, free).
// One thread, so the callbacks come in one order. With OMPT_FIELDS_NOWAIT defined (by
// ompt_fields_nowait.c) each construct kind is also run with nowait, and with nowait and
// depend, each followed by a taskwait.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int a[8] = {0}, b[4] = {0}, c[4] = {0}, x = 1, dep = 0;
  for (int i = 0; i < 8; i++) a[i] = i;

  printf("-- target\n");
#pragma omp target map(tofrom : a) map(to : b) map(from : c)
  {
    a[0] += 1;
    for (int i = 0; i < 4; i++) c[i] = i;
  }
  printf("-- target depend\n");
#pragma omp target map(tofrom : x) depend(inout : dep)
  { x += 1; }
  printf("-- target teams num_teams(2)\n");
#pragma omp target teams num_teams(2) map(tofrom : x)
  {
    if (omp_get_team_num() == 0) x += 1;
  }
#ifdef OMPT_FIELDS_NOWAIT
  printf("-- target nowait\n");
#pragma omp target map(tofrom : x) nowait
  { x += 1; }
#pragma omp taskwait
  printf("-- target nowait depend\n");
#pragma omp target map(tofrom : x) nowait depend(inout : dep)
  { x += 1; }
#pragma omp taskwait
#endif

  printf("-- enter data\n");
#pragma omp target enter data map(to : a)
  printf("-- enter data depend\n");
#pragma omp target enter data map(alloc : c) depend(inout : dep)
#ifdef OMPT_FIELDS_NOWAIT
  printf("-- enter data nowait\n");
#pragma omp target enter data map(to : b) nowait
#pragma omp taskwait
  printf("-- enter data nowait depend\n");
#pragma omp target enter data map(to : x) nowait depend(inout : dep)
#pragma omp taskwait
#endif

  printf("-- update to\n");
#pragma omp target update to(a)
  printf("-- update from depend\n");
#pragma omp target update from(a) depend(inout : dep)
#ifdef OMPT_FIELDS_NOWAIT
  printf("-- update from nowait\n");
#pragma omp target update from(a) nowait
#pragma omp taskwait
  printf("-- update to nowait depend\n");
#pragma omp target update to(b) nowait depend(inout : dep)
#pragma omp taskwait
#endif

  printf("-- exit data\n");
#pragma omp target exit data map(from : a)
  printf("-- exit data depend\n");
#pragma omp target exit data map(release : c) depend(inout : dep)
#ifdef OMPT_FIELDS_NOWAIT
  printf("-- exit data nowait\n");
#pragma omp target exit data map(from : b) nowait
#pragma omp taskwait
  printf("-- exit data nowait depend\n");
#pragma omp target exit data map(from : x) nowait depend(inout : dep)
#pragma omp taskwait
#endif

  printf("-- target data with a region inside\n");
#pragma omp target data map(tofrom : a)
  {
#pragma omp target map(tofrom : a)
    { a[1] += 1; }
  }

  printf("-- omp_target_alloc, memcpy both ways, associate, disassociate, free\n");
  int host = omp_get_initial_device();
  int *p = omp_target_alloc(sizeof a, 0);
  omp_target_memcpy(p, a, sizeof a, 0, 0, 0, host);
  omp_target_memcpy(b, p, sizeof b, 0, 0, host, 0);
  omp_target_associate_ptr(c, p, sizeof c, 0, 0);
#pragma omp target map(tofrom : c)
  { c[0] = 7; }
  omp_target_disassociate_ptr(c, 0);
  omp_target_free(p, 0);

  printf("a=%d %d b=%d c=%d x=%d\n", a[0], a[1], b[1], c[1], x);
  return 0;
}
