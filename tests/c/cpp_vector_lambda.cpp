// C++: std::vector data mapped through a pointer section, a lambda used
// inside a target region, and references.
#include <omp.h>
#include <cstdio>
#include <numeric>
#include <vector>

static void scale_ref(std::vector<float> &v, float s) {
  float *p = v.data();
  int n = (int)v.size();
#pragma omp target map(tofrom : p[0:n])
  {
    for (int i = 0; i < n; ++i) p[i] *= s;
  }
}

int main() {
  int errors = 0;
  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = (float)i;
    y[i] = 1.0f;
  }
  float *xp = x.data();
  float *yp = y.data();
  const float a = 2.0f;

#pragma omp target map(to : xp[0:n]) map(tofrom : yp[0:n])
  {
    auto axpy = [=](int i) { yp[i] = a * xp[i] + yp[i]; };
    for (int i = 0; i < n; ++i) axpy(i);
  }
  double s = std::accumulate(y.begin(), y.end(), 0.0);
  std::printf("y[0]=%.1f y[999]=%.1f sum=%.1f\n", y[0], y[999], s);
  if (y[999] != 1999.0f || s != 1000.0 + 2.0 * 499500.0) errors++;

  // lambda with captures by reference of device variables inside the region
  int count = 0;
#pragma omp target map(tofrom : count) map(to : xp[0:n])
  {
    auto is_even = [](float v) { return ((int)v % 2) == 0; };
    int c = 0;
    auto bump = [&c]() { ++c; };
    for (int i = 0; i < n; ++i)
      if (is_even(xp[i])) bump();
    count = c;
  }
  std::printf("even count=%d\n", count);
  if (count != 500) errors++;

  scale_ref(x, 0.5f);
  std::printf("after scale_ref: x[10]=%.1f x[999]=%.1f\n", x[10], x[999]);
  if (x[10] != 5.0f || x[999] != 499.5f) errors++;

  // vector of ints in a target data region, two kernels
  std::vector<int> v(64);
  std::iota(v.begin(), v.end(), 0);
  int *vp = v.data();
  int vs = 0;
#pragma omp target data map(tofrom : vp[0:64])
  {
#pragma omp target
    {
      for (int i = 0; i < 64; ++i) vp[i] = vp[i] * vp[i];
    }
#pragma omp target map(tofrom : vs)
    {
      for (int i = 0; i < 64; ++i) vs += vp[i];
    }
  }
  std::printf("v[63]=%d vs=%d\n", v[63], vs);
  if (v[63] != 3969 || vs != 85344) errors++;

  std::printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
