// DIVERGENCE: two sections of one array in one target region, neither present before, are refused with a message (OpenMP 5.2 §5.8.3 makes such a program non-conforming); LLVM 19 maps them apart and the kernel writes past the first one's device copy through the one pointer it gets: the second row's update is lost and the program exits 0 (with four rows, SIGSEGV on the host device)
// STATUS: signal 6
// CFLAGS: -g
// OURS-STDERR: omptarget error: map items 0 and 1 of a target region share the base 0xADDR but map separate storage: a[1][0:128] (1024 bytes at 0xADDR) is not within the mapping of a[0][0:128] (1024 bytes at 0xADDR), which the kernel reaches both through; OpenMP requires such items, unless present already, to refer to the same elements (map the whole range in one item)
#include <stdio.h>

static double a[4][128];

struct pair {
  double x[8];
  double y[8];
};

int main(void) {
  // Conforming: the rows lie in one mapping made before the region (present), so the
  // kernel's one pointer reaches both.
#pragma omp target enter data map(to : a)
#pragma omp target map(tofrom : a[0][0:128], a[1][0:128])
  {
    a[0][0] += 1.0;
    a[1][0] += 2.0;
  }
#pragma omp target exit data map(from : a)
  printf("rows of a present array: %.1f %.1f\n", a[0][0], a[1][0]);
  // Conforming: members of one struct (clang maps the struct's span and the members in it).
  struct pair s = {{0}, {0}};
#pragma omp target map(tofrom : s.x[0:2], s.y[0:2])
  {
    s.x[0] += 1.0;
    s.y[1] += 2.0;
  }
  printf("members of a struct: %.1f %.1f\n", s.x[0], s.y[1]);
  // Not conforming: two rows, neither present, mapped apart; the kernel gets a pointer to
  // the first row's copy only.
  printf("two rows of an unmapped array in one region\n");
  fflush(stdout);
#pragma omp target map(tofrom : a[0][0:128], a[1][0:128])
  {
    a[0][0] += 1.0;
    a[1][0] += 2.0;
  }
  printf("not reached: %.1f %.1f\n", a[0][0], a[1][0]);
  return 0;
}
