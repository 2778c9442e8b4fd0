// target exit data on data that is not present is ignored (OpenMP 5.2
// §5.8.3: no effect when the list item has no corresponding storage),
// for from, release and delete, including struct members; several
// members of one struct deleted in a single construct; target data
// with from on data that was never mapped (mapped and unmapped at once).
#include <omp.h>
#include <stdio.h>

struct S {
  int a;
  int b;
  double c[4];
  int d;
};

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int x = 5;
  int arr[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  struct S s = {1, 2, {3, 4, 5, 6}, 7};

  /* 1. unmapped scalar and array: from/release/delete ignored */
#pragma omp target exit data map(from : x)
#pragma omp target exit data map(release : arr)
#pragma omp target exit data map(delete : arr[2:3])
  printf("1: x=%d arr[2]=%d present=%d\n", x, arr[2], omp_target_is_present(arr, dev));
  if (x != 5 || arr[2] != 3) errors++;

  /* 2. one present and one absent item in the same construct */
#pragma omp target enter data map(to : x)
#pragma omp target map(tofrom : x) /* present: no copy either way */
  { x = 50; }
#pragma omp target exit data map(from : x, arr)
  printf("2: x=%d arr[0]=%d x present=%d\n", x, arr[0], omp_target_is_present(&x, dev));
  if (x != 50 || arr[0] != 1 || omp_target_is_present(&x, dev)) errors++;

  /* 3. delete several members of one struct in one construct */
#pragma omp target enter data map(to : s.a, s.c, s.d)
  printf("3: a=%d c=%d d=%d present\n", omp_target_is_present(&s.a, dev),
         omp_target_is_present(&s.c[3], dev), omp_target_is_present(&s.d, dev));
#pragma omp target exit data map(delete : s.a, s.c, s.d)
  printf("3: after delete a=%d c=%d d=%d\n", omp_target_is_present(&s.a, dev),
         omp_target_is_present(&s.c[3], dev), omp_target_is_present(&s.d, dev));
  if (omp_target_is_present(&s.a, dev) || omp_target_is_present(&s.d, dev)) errors++;

  /* 4. exit data from on members of a struct that is not mapped at all */
#pragma omp target exit data map(from : s.a, s.c[1:2])
  printf("4: s unchanged a=%d c[1]=%d\n", s.a, (int)s.c[1]);
  if (s.a != 1 || s.c[1] != 4) errors++;

  /* 5. members mapped, device writes, from on some members and delete on others */
#pragma omp target enter data map(to : s.a, s.b, s.d)
#pragma omp target
  {
    s.a = 10;
    s.b = 20;
    s.d = 70;
  }
#pragma omp target exit data map(from : s.a, s.d) map(delete : s.b)
  printf("5: a=%d b=%d d=%d present=%d\n", s.a, s.b, s.d, omp_target_is_present(&s.b, dev));
  if (s.a != 10 || s.b != 2 || s.d != 70) errors++;

  /* 6. delete twice: the second is ignored */
#pragma omp target enter data map(to : arr)
#pragma omp target exit data map(delete : arr)
#pragma omp target exit data map(delete : arr)
  printf("6: arr present=%d\n", omp_target_is_present(arr, dev));
  if (omp_target_is_present(arr, dev)) errors++;

  /* 7. update from on absent data is ignored */
#pragma omp target update from(arr, s.c)
  printf("7: arr[7]=%d c[3]=%d\n", arr[7], (int)s.c[3]);
  if (arr[7] != 8 || s.c[3] != 6) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
