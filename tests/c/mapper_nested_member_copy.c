// A struct mapped through its default mapper, whose members are structs with their own
// mappers (OpenMP 5.2 §5.8.8), is new on the device the first time a construct maps it: every
// member the mappers map with `to` must be copied in (§5.8.3), also when another component of
// the same construct (here a pointer section that is already present) was found mapped.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct In {
  int a;
  int b;
};
struct Out {
  int *p;
  struct In in;
  int k;
};
struct Pair {
  int a;
  int b;
};
struct Wrap {
  int *p;
  struct Pair q;
};

#pragma omp declare mapper(struct In v) map(v)
#pragma omp declare mapper(struct Out o) map(o.p[0:4], o.in, o.k)
#pragma omp declare mapper(struct Pair v) map(to : v.a) map(tofrom : v.b)
#pragma omp declare mapper(struct Wrap w) map(w.p[0:4], w.q)

int main(void) {
  int errors = 0;
  int d[4] = {1, 2, 3, 4};
#pragma omp target enter data map(to : d)

  /* 1: explicit map, the pointee already present */
  struct Out o = {d, {5, 6}, 7};
  int r[4] = {0};
#pragma omp target map(tofrom : o) map(from : r)
  {
    r[0] = o.p[3];
    r[1] = o.in.a;
    r[2] = o.in.b;
    r[3] = o.k;
    o.in.b = 60;
  }
  printf("1 explicit: %d %d %d %d host in.b=%d\n", r[0], r[1], r[2], r[3], o.in.b);
  if (r[0] != 4 || r[1] != 5 || r[2] != 6 || r[3] != 7 || o.in.b != 60) errors++;

  /* 2: implicit map through the default mapper, a member mapper with `to` members */
  struct Wrap w = {d, {8, 9}};
#pragma omp target map(from : r)
  {
    r[0] = w.p[0];
    r[1] = w.q.a;
    r[2] = w.q.b;
    w.q.a = -1; /* to only: not copied back */
    w.q.b = 90;
  }
  printf("2 implicit: %d %d %d host q=%d %d\n", r[0], r[1], r[2], w.q.a, w.q.b);
  if (r[0] != 1 || r[1] != 8 || r[2] != 9 || w.q.a != 8 || w.q.b != 90) errors++;

  /* 3: target enter data, then a region, then target exit data */
  struct Out e = {d, {11, 12}, 13};
#pragma omp target enter data map(to : e)
#pragma omp target map(from : r)
  {
    r[0] = e.in.a;
    r[1] = e.in.b;
    r[2] = e.k;
  }
  printf("3 enter data: %d %d %d\n", r[0], r[1], r[2]);
  if (r[0] != 11 || r[1] != 12 || r[2] != 13) errors++;
#pragma omp target exit data map(release : e)

  /* 4: an array of such structs */
  struct Out arr[3] = {{d, {21, 22}, 23}, {d, {31, 32}, 33}, {d, {41, 42}, 43}};
  int s[3] = {0};
#pragma omp target map(tofrom : arr) map(from : s)
  {
    for (int i = 0; i < 3; ++i) s[i] = arr[i].in.a + arr[i].in.b + arr[i].k + arr[i].p[i];
  }
  printf("4 array: %d %d %d\n", s[0], s[1], s[2]);
  if (s[0] != 67 || s[1] != 98 || s[2] != 129) errors++;

#pragma omp target exit data map(release : d)
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
