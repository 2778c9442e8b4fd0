// Several deferred target tasks that all use the same array, mapped once
// with target enter data, read-only, and each write a disjoint slice of an
// output array. Each task's map(to:) of the shared array only takes and
// drops a reference (no copy); the mapping survives all of them and goes
// away at the exit data.
#include <omp.h>
#include <stdio.h>

#define N 256
#define T 16
#define CH (N / T)

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int in[N], out[N];
  for (int i = 0; i < N; ++i) {
    in[i] = i + 1;
    out[i] = 0;
  }

#pragma omp target enter data map(to : in)
  /* the host copy changes after entry; the tasks must read the device copy */
  for (int i = 0; i < N; ++i) in[i] = -7;

  for (int round = 0; round < 3; ++round) {
    for (int t = 0; t < T; ++t) {
      int lo = t * CH;
#pragma omp target map(to : in) map(tofrom : out[lo:CH]) nowait
      {
        /* each slice: sum of a window of 'in' around it, plus round */
        for (int i = lo; i < lo + CH; ++i) {
          int s = 0;
          for (int k = 0; k < 4; ++k) s += in[(i + k) % N];
          out[i] += s + round;
        }
      }
    }
#pragma omp taskwait
    printf("round %d: present=%d out[0]=%d out[255]=%d\n", round, omp_target_is_present(in, dev),
           out[0], out[N - 1]);
    if (!omp_target_is_present(in, dev)) errors++;
    for (int i = 0; i < N; ++i) {
      int s = 0;
      for (int k = 0; k < 4; ++k) s += (i + k) % N + 1;
      if (out[i] != (round + 1) * s + round * (round + 1) / 2) errors++;
    }
  }

  /* out slices were mapped per task and are gone; 'in' is still mapped
     and its host copy untouched */
  int out_present = 0;
  for (int t = 0; t < T; ++t) out_present += omp_target_is_present(&out[t * CH], dev);
  printf("out slices present=%d host in[0]=%d\n", out_present, in[0]);
  if (out_present || in[0] != -7) errors++;

  /* deferred tasks sharing 'in' through an implicit (present) mapping and
     reducing disjoint slices into per-task results */
  int part[T];
  for (int t = 0; t < T; ++t) part[t] = -1;
  for (int t = 0; t < T; ++t) {
#pragma omp target map(from : part[t:1]) nowait
    {
      int s = 0;
      for (int i = t * CH; i < (t + 1) * CH; ++i) s += in[i];
      part[t] = s;
    }
  }
#pragma omp taskwait
  int total = 0;
  for (int t = 0; t < T; ++t) {
    total += part[t];
    int e = 0;
    for (int i = t * CH; i < (t + 1) * CH; ++i) e += i + 1;
    if (part[t] != e) errors++;
  }
  printf("partial sums: part[0]=%d part[15]=%d total=%d\n", part[0], part[T - 1], total);
  if (total != N * (N + 1) / 2) errors++;

#pragma omp target exit data map(release : in)
  printf("after exit: present=%d\n", omp_target_is_present(in, dev));
  if (omp_target_is_present(in, dev)) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
