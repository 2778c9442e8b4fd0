// Deferred target tasks and ordinary host tasks in one dependence graph:
// a host task produces input, target tasks consume it (several readers
// run as a fan-out on depend(in:)), a host task joins their results, and
// a final target task and host task finish the chain. Also a target
// nowait with if(target: 0), which runs on the host but keeps its place
// in the graph.
#include <omp.h>
#include <stdio.h>

#define N 64
#define F 4

int main(void) {
  int errors = 0;
  int in[N], out[F][N], res[F];
  int total = -1, fin = -1;
  for (int i = 0; i < N; ++i) in[i] = 0;

#pragma omp parallel num_threads(2)
#pragma omp single
  {
    /* host producer */
#pragma omp task depend(out : in) shared(in)
    {
      for (int i = 0; i < N; ++i) in[i] = i + 1;
    }
    /* fan-out: F target readers of 'in', each writes its own row */
    for (int f = 0; f < F; ++f) {
#pragma omp target map(to : in) map(from : out[f][0:N]) nowait depend(in : in) \
    depend(out : out[f][0:N])
      {
        for (int i = 0; i < N; ++i) out[f][i] = in[i] * (f + 1);
      }
    }
    /* host consumers, one per row */
    for (int f = 0; f < F; ++f) {
#pragma omp task depend(in : out[f][0:N]) depend(out : res[f]) shared(out, res)
      {
        int s = 0;
        for (int i = 0; i < N; ++i) s += out[f][i];
        res[f] = s;
      }
    }
    /* host join: overwrites 'in', so it must wait for all the readers */
#pragma omp task depend(in : res[0], res[1], res[2], res[3]) depend(inout : in) \
    shared(res, total, in)
    {
      total = res[0] + res[1] + res[2] + res[3];
      for (int i = 0; i < N; ++i) in[i] = total;
    }
    /* target task after the join, then a host task after it */
#pragma omp target map(tofrom : in) nowait depend(inout : in)
    {
      for (int i = 0; i < N; ++i) in[i] -= i;
    }
    /* host fallback of a target task: still ordered after the one above */
#pragma omp target if (target : 0) map(tofrom : in) nowait depend(inout : in)
    {
      for (int i = 0; i < N; ++i) in[i] = in[i] / 2;
    }
#pragma omp task depend(in : in) shared(in, fin)
    {
      fin = in[0] + in[N - 1];
    }
  }

  int s1 = N * (N + 1) / 2;
  for (int f = 0; f < F; ++f) {
    if (res[f] != s1 * (f + 1)) errors++;
    for (int i = 0; i < N; ++i)
      if (out[f][i] != (i + 1) * (f + 1)) errors++;
  }
  int et = s1 * (1 + 2 + 3 + 4);
  for (int i = 0; i < N; ++i)
    if (in[i] != (et - i) / 2) errors++;
  printf("res=%d %d %d %d total=%d in[0]=%d in[63]=%d fin=%d\n", res[0], res[1], res[2], res[3],
         total, in[0], in[N - 1], fin);
  if (total != et || fin != et / 2 + (et - (N - 1)) / 2) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
