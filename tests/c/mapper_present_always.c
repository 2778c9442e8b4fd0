// declare mapper with the `present` and `always` map-type modifiers on the list item (OpenMP
// 5.2 §5.8.3, §5.8.8): a mapper's components inherit the item's modifiers. `present` on a
// struct that was entered through its mapper is satisfied; `always, to` copies every member the
// mapper maps with `to` again, although the struct is present; `always, from` copies them back
// at once on exit data with a release that leaves the struct mapped.
#include <omp.h>
#include <stdio.h>

typedef struct {
  int a;
  int b;
  int c;
} trio_t;

#pragma omp declare mapper(trio_t t) map(t.a, t.b) map(to : t.c)

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  trio_t t = {1, 2, 3};
#pragma omp target enter data map(to : t)
  printf("entered: present=%d\n", omp_target_is_present(&t, dev));

  int seen = 0;
#pragma omp target map(present, to : t) map(from : seen)
  { seen = t.a + t.b + t.c; }
  printf("present: seen=%d\n", seen);
  if (seen != 6) errors++;

  /* host changes, pushed with always */
  t.a = 10;
  t.b = 20;
  t.c = 30;
#pragma omp target enter data map(always, to : t)
#pragma omp target map(from : seen)
  { seen = t.a + t.b + t.c; }
  printf("always to: seen=%d\n", seen);
  if (seen != 60) errors++;

  /* device changes, fetched with always from while the struct stays mapped */
#pragma omp target
  {
    t.a = 100;
    t.c = 300;
  }
#pragma omp target exit data map(always, from : t)
  printf("always from: a=%d b=%d c=%d present=%d\n", t.a, t.b, t.c,
         omp_target_is_present(&t, dev));
  if (t.a != 100 || t.b != 20 || t.c != 30) errors++;
#pragma omp target exit data map(delete : t)
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
