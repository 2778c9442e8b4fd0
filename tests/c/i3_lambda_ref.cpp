// C++ lambdas capturing by reference used inside target regions, with the
// captured data mapped: a lambda defined inside the region, a lambda
// defined on the host and called in the region (its reference captures
// are attached to the device copies of the mapped variables), and a
// generic lambda over a mapped array.
#include <omp.h>
#include <stdio.h>

int main() {
  int errors = 0;
  int a[8];
  for (int i = 0; i < 8; ++i) a[i] = i;
  int total = 0;
  int scale = 3;

  /* 1. lambda created in the device region, capturing device variables */
#pragma omp target map(tofrom : a, total) map(to : scale)
  {
    auto add = [&](int i) {
      a[i] *= scale;
      total += a[i];
    };
    for (int i = 0; i < 8; ++i) add(i);
  }
  printf("1: total=%d a[7]=%d\n", total, a[7]);
  if (total != 84 || a[7] != 21) errors++;

  /* 2. host lambda with reference captures, mapped together with the data */
  int count = 0;
  double acc = 0.5;
  auto work = [&](int i) {
    count += 1;
    acc += a[i];
  };
#pragma omp target map(to : a) map(tofrom : count, acc) map(to : work)
  {
    for (int i = 0; i < 4; ++i) work(i);
  }
  printf("2: count=%d acc=%.1f\n", count, acc);
  if (count != 4 || acc != 18.5) errors++;

  /* 3. the same lambda used with the data kept on the device by target data */
  count = 100;
#pragma omp target data map(tofrom : count, acc) map(to : a)
  {
#pragma omp target map(to : work)
    { work(7); }
#pragma omp target map(to : work)
    { work(6); }
  }
  printf("3: count=%d acc=%.1f\n", count, acc);
  if (count != 102 || acc != 18.5 + 21 + 18) errors++;

  /* 4. generic lambda, by-value capture of a pointer to mapped data */
  int out[8] = {0};
#pragma omp target map(to : a) map(from : out)
  {
    auto f = [&out](auto x, int i) { out[i] = static_cast<int>(x) + 1; };
    for (int i = 0; i < 8; ++i) f(a[i] * 1.0, i);
  }
  printf("4: out[0]=%d out[3]=%d out[7]=%d\n", out[0], out[3], out[7]);
  if (out[0] != 1 || out[3] != 10 || out[7] != 22) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
