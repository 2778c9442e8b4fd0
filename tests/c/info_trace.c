// ENV: LIBOMPTARGET_INFO=-1
// STDERR
// LIBOMPTARGET_INFO=-1 trace of a small program: enter data, a target
// region with an existing and a new mapping, target update, exit data, and
// a teams region. The trace (stderr) is part of the contract; addresses are
// normalised by the harness. Compiled with -g0, so names are "unknown".
#include <omp.h>
#include <stdio.h>

int main(void) {
  int a[4] = {1, 2, 3, 4};
  int s = 0;
#pragma omp target enter data map(to : a)
#pragma omp target map(tofrom : a) map(from : s)
  {
    s = a[0] + a[1] + a[2] + a[3];
    a[0] = 10;
  }
#pragma omp target update from(a[0:1])
#pragma omp target exit data map(release : a)
  long t = 0;
#pragma omp target teams distribute parallel for reduction(+ : t) num_teams(1) thread_limit(1)
  for (int i = 0; i < 100; ++i) t += i;
  printf("s=%d a[0]=%d t=%ld\n", s, a[0], t);
  printf("%s\n", (s == 10 && a[0] == 10 && t == 4950) ? "PASS" : "FAIL");
  return 0;
}
