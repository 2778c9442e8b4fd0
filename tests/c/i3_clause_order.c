// Several map clauses for one list item in one construct, and always
// combined with reference counting (OpenMP 5.2 §5.8.3): what reaches the
// host. The items of one exit construct are processed last to first, each
// deciding from the count it finds (LLVM 19); the specification leaves the
// order of several map clauses for one list item open (docs/TESTING.md).
#include <omp.h>
#include <stdio.h>

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int a[4] = {1, 2, 3, 4};

  /* 1. exit data map(always, from: a) map(delete: a): the always-from copy
        happens and the entry is removed */
#pragma omp target enter data map(to : a)
#pragma omp target enter data map(to : a) /* count 2 */
#pragma omp target map(tofrom : a)
  { a[0] = 10; }
#pragma omp target exit data map(always, from : a) map(delete : a)
  printf("1: a[0]=%d present=%d\n", a[0], omp_target_is_present(a, dev));
  if (a[0] != 10 || omp_target_is_present(a, dev)) errors++;

  /* 2. exit data map(from: a) map(delete: a) with count 2: the delete
        (processed first) zeroes the count and removes the entry; the from
        then finds no reference to release and copies nothing back: a[1]
        stays 1 on the host */
  a[0] = 1;
#pragma omp target enter data map(to : a)
#pragma omp target enter data map(to : a)
#pragma omp target map(tofrom : a)
  { a[1] = 20; }
#pragma omp target exit data map(from : a) map(delete : a)
  printf("2: a[1]=%d present=%d\n", a[1], omp_target_is_present(a, dev));
  if (a[1] != 2 || omp_target_is_present(a, dev)) errors++;

  /* 3. target data map(always, tofrom: a) on present data: copies in at
        entry and out at exit although the count stays > 0 */
  a[1] = 2;
#pragma omp target enter data map(to : a)
  a[2] = 30; /* host only */
#pragma omp target data map(always, tofrom : a)
  {
#pragma omp target map(tofrom : a)
    { a[3] = a[2] + 10; }
  }
  printf("3: a[2]=%d a[3]=%d present=%d\n", a[2], a[3], omp_target_is_present(a, dev));
  if (a[3] != 40 || !omp_target_is_present(a, dev)) errors++;

  /* 4. plain tofrom on present data: neither direction */
  a[2] = 300;
#pragma omp target data map(tofrom : a)
  {
#pragma omp target map(tofrom : a)
    { a[0] = a[2]; } /* device a[2] is 30 */
  }
  printf("4: a[0]=%d a[2]=%d\n", a[0], a[2]);
  if (a[0] != 1 || a[2] != 300) errors++;

  /* 5. always to only (no from) on present data */
#pragma omp target data map(always, to : a)
  {
#pragma omp target map(tofrom : a)
    { a[1] = a[2] + 1; }
  }
  printf("5: a[1]=%d (host unchanged)\n", a[1]);
#pragma omp target update from(a)
  printf("5: after update a[1]=%d\n", a[1]);
  if (a[1] != 301) errors++;

  /* 6. exit data map(release: a) map(always, from: a): copy, then count 0 */
#pragma omp target map(tofrom : a)
  { a[0] = -1; }
#pragma omp target exit data map(release : a) map(always, from : a)
  printf("6: a[0]=%d present=%d\n", a[0], omp_target_is_present(a, dev));
  if (a[0] != -1 || omp_target_is_present(a, dev)) errors++;

  /* 7. the same item twice with to and from on one target region: clang
        passes two entries; both LLVM 19 and ours treat them one by one
        (printed only, not counted: see the report on check 2) */
  int b[2] = {5, 6};
#pragma omp target map(to : b) map(from : b)
  { b[0] += 100; }
  printf("7: b[0]=%d b[1]=%d\n", b[0], b[1]);

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
