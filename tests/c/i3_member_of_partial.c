// Partial struct mapping: only some members of a struct (map(s.a, s.c),
// skipping s.b), members of a nested struct (map(s.in.x)), an array member
// section, and a section of an array of structs (map(arr[1:2])).
#include <omp.h>
#include <stdio.h>

struct In {
  int x;
  int y;
};
struct S {
  int a;
  int b[16];
  int c;
  struct In in;
  int tail[4];
};

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  struct S s = {0};
  s.a = 1;
  s.c = 3;
  s.in.x = 5;
  s.in.y = 6;
  for (int i = 0; i < 16; ++i) s.b[i] = 100 + i;

  /* 1. s.a and s.c only */
#pragma omp target map(tofrom : s.a, s.c)
  {
    s.a += 10;
    s.c += 30;
  }
  printf("1: a=%d b[0]=%d c=%d\n", s.a, s.b[0], s.c);
  if (s.a != 11 || s.c != 33 || s.b[0] != 100) errors++;

  /* 2. presence of members while the partial map is active */
#pragma omp target data map(to : s.a, s.c)
  {
    printf("2: a present=%d c present=%d in.x present=%d tail present=%d\n",
           omp_target_is_present(&s.a, dev), omp_target_is_present(&s.c, dev),
           omp_target_is_present(&s.in.x, dev), omp_target_is_present(&s.tail[0], dev));
    /* b is inside the allocated range [a, c] of the struct on LLVM and a
       spec-conforming runtime may allocate it too, so it is not printed */
  }
  int left = omp_target_is_present(&s.a, dev) + omp_target_is_present(&s.c, dev);
  printf("2: after: left=%d\n", left);
  if (left) errors++;

  /* 3. nested member */
#pragma omp target map(tofrom : s.in.x)
  { s.in.x *= 7; }
  printf("3: in.x=%d in.y=%d\n", s.in.x, s.in.y);
  if (s.in.x != 35 || s.in.y != 6) errors++;

  /* 4. nested member plus a member array section */
#pragma omp target map(tofrom : s.in.y, s.b[4:4])
  {
    s.in.y = -s.in.y;
    for (int i = 4; i < 8; ++i) s.b[i] = s.b[i] * 2;
  }
  printf("4: in.y=%d b[3]=%d b[4]=%d b[7]=%d b[8]=%d\n", s.in.y, s.b[3], s.b[4], s.b[7], s.b[8]);
  if (s.in.y != -6 || s.b[3] != 103 || s.b[4] != 208 || s.b[7] != 214 || s.b[8] != 108)
    errors++;

  /* 5. section of an array of structs */
  struct In arr[4];
  for (int i = 0; i < 4; ++i) {
    arr[i].x = i;
    arr[i].y = 10 * i;
  }
#pragma omp target map(tofrom : arr[1:2])
  {
    for (int i = 1; i < 3; ++i) {
      arr[i].x += 100;
      arr[i].y += 1000;
    }
  }
  printf("5: arr x=%d %d %d %d y=%d %d %d %d\n", arr[0].x, arr[1].x, arr[2].x, arr[3].x,
         arr[0].y, arr[1].y, arr[2].y, arr[3].y);
  if (arr[0].x != 0 || arr[1].x != 101 || arr[2].y != 1020 || arr[3].x != 3) errors++;

  /* 6. partial maps with different map types on members */
  s.a = 1;
  s.c = 2;
#pragma omp target map(to : s.a) map(from : s.c)
  { s.c = s.a + 40; s.a = 99; }
  printf("6: a=%d c=%d\n", s.a, s.c);
  if (s.a != 1 || s.c != 41) errors++;

  /* 7. members mapped by enter data, referenced by a later region */
#pragma omp target enter data map(to : s.a, s.tail[0:4])
#pragma omp target map(tofrom : s.a, s.tail[1:2])
  {
    s.a = 7;
    s.tail[1] = 11;
    s.tail[2] = 12;
  }
  printf("7: a=%d tail[1]=%d (still mapped, no copy back)\n", s.a, s.tail[1]);
  if (s.a != 1 || s.tail[1] != 0) errors++;
#pragma omp target exit data map(from : s.a, s.tail[0:4])
  printf("7: after exit a=%d tail=%d %d %d %d present=%d\n", s.a, s.tail[0], s.tail[1],
         s.tail[2], s.tail[3], omp_target_is_present(&s.a, dev));
  if (s.a != 7 || s.tail[2] != 12 || omp_target_is_present(&s.a, dev)) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
