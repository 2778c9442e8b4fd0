// C++: a class with member functions used inside target regions, mapping
// of an object and of a member array through 'this', and a template.
#include <omp.h>
#include <cstdio>

#pragma omp declare target
struct Vec3 {
  double x, y, z;
  double dot(const Vec3 &o) const { return x * o.x + y * o.y + z * o.z; }
  Vec3 scaled(double s) const { return Vec3{x * s, y * s, z * s}; }
};

template <typename T> T square(T v) { return v * v; }
#pragma omp end declare target

class Accumulator {
public:
  static const int N = 8;
  int vals[N];
  int bias;
  explicit Accumulator(int b) : bias(b) {
    for (int i = 0; i < N; ++i) vals[i] = i;
  }
  // offload a member function: map the members through this
  void add_bias_on_device() {
#pragma omp target map(tofrom : this->vals[0:N]) map(to : this->bias)
    {
      for (int i = 0; i < N; ++i) vals[i] += bias;
    }
  }
  int sum() const {
    int s = 0;
    for (int i = 0; i < N; ++i) s += vals[i];
    return s;
  }
};

int main() {
  int errors = 0;
  Vec3 a{1.0, 2.0, 3.0}, b{4.0, 5.0, 6.0};
  double d = 0;
  Vec3 c{0, 0, 0};
#pragma omp target map(to : a, b) map(from : d, c)
  {
    d = a.dot(b);
    c = a.scaled(2.0);
  }
  std::printf("dot=%.1f scaled=(%.1f,%.1f,%.1f)\n", d, c.x, c.y, c.z);
  if (d != 32.0 || c.z != 6.0) errors++;

  int si = 0;
  double sd = 0;
#pragma omp target map(from : si, sd)
  {
    si = square(7);
    sd = square(1.5);
  }
  std::printf("square<int>(7)=%d square<double>(1.5)=%.2f\n", si, sd);
  if (si != 49 || sd != 2.25) errors++;

  Accumulator acc(10);
  acc.add_bias_on_device();
  std::printf("acc.vals[0]=%d acc.vals[7]=%d sum=%d\n", acc.vals[0], acc.vals[7], acc.sum());
  if (acc.sum() != 28 + 80) errors++;

  // an object mapped as a whole, modified on the device
  Accumulator acc2(1);
#pragma omp target map(tofrom : acc2)
  {
    acc2.bias = 5;
    for (int i = 0; i < Accumulator::N; ++i) acc2.vals[i] *= 2;
  }
  std::printf("acc2.bias=%d acc2.sum=%d\n", acc2.bias, acc2.sum());
  if (acc2.bias != 5 || acc2.sum() != 56) errors++;

  std::printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
