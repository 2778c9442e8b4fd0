// Struct members passed by value, firstprivate scalars and arrays, and
// mapping individual struct members.
#include <omp.h>
#include <stdio.h>

typedef struct {
  int id;
  double scale;
  int data[4];
} rec_t;

static int use_rec(rec_t r) {
  int out = 0;
#pragma omp target map(from : out) firstprivate(r)
  {
    out = (int)(r.id * r.scale) + r.data[3];
    r.id = -1; /* private copy */
  }
  return out;
}

int main(void) {
  int errors = 0;
  rec_t r = {7, 3.0, {1, 2, 3, 4}};
  int v = use_rec(r);
  printf("struct by value: out=%d r.id=%d\n", v, r.id);
  if (v != 25 || r.id != 7) errors++;

  /* firstprivate scalars: initialised from host, private on device */
  int k = 11;
  double f = 0.5;
  int res = 0;
#pragma omp target firstprivate(k, f) map(from : res)
  {
    k += 1;
    f *= 4.0;
    res = k * (int)f;
  }
  printf("firstprivate scalars: res=%d k=%d f=%.1f\n", res, k, f);
  if (res != 24 || k != 11 || f != 0.5) errors++;

  /* firstprivate array: copied in, writes stay private */
  int arr[6] = {1, 2, 3, 4, 5, 6};
  int sum = 0;
#pragma omp target firstprivate(arr) map(tofrom : sum)
  {
    for (int i = 0; i < 6; ++i) {
      arr[i] *= 100;
      sum += arr[i];
    }
  }
  printf("firstprivate array: sum=%d arr[5]=%d\n", sum, arr[5]);
  if (sum != 2100 || arr[5] != 6) errors++;

  /* private: not initialised, not copied out */
  int priv = 123;
  int res2 = 0;
#pragma omp target private(priv) map(from : res2)
  {
    priv = 5;
    res2 = priv * 2;
  }
  printf("private: res2=%d priv=%d\n", res2, priv);
  if (res2 != 10 || priv != 123) errors++;

  /* map individual members of a struct */
  rec_t s = {1, 2.0, {10, 20, 30, 40}};
#pragma omp target map(tofrom : s.id, s.data[1:2])
  {
    s.id = 99;
    s.data[1] += 1;
    s.data[2] += 2;
  }
  printf("member map: id=%d data=%d %d %d %d scale=%.1f\n", s.id, s.data[0], s.data[1],
         s.data[2], s.data[3], s.scale);
  if (s.id != 99 || s.data[0] != 10 || s.data[1] != 21 || s.data[2] != 32 || s.data[3] != 40)
    errors++;

  /* struct with a pointer member: map the pointee via the member */
  struct {
    int n;
    int *p;
  } vec;
  int storage[5] = {5, 4, 3, 2, 1};
  vec.n = 5;
  vec.p = storage;
  int total = 0;
#pragma omp target map(to : vec) map(tofrom : vec.p[0:vec.n]) map(tofrom : total)
  {
    for (int i = 0; i < vec.n; ++i) {
      total += vec.p[i];
      vec.p[i] = i;
    }
  }
  printf("pointer member: total=%d storage=%d %d %d %d %d\n", total, storage[0], storage[1],
         storage[2], storage[3], storage[4]);
  if (total != 15 || storage[4] != 4) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
