// `declare target indirect` with C++ virtual functions (OpenMP 5.2 §7.8.2): virtual calls on
// objects built in a target region dispatch to the device versions of the overriders, and a
// host pointer to an indirect function that makes virtual calls reaches the device.
// (clang 19 crashes on virtual functions defined inside the class in an indirect region, so
// they are defined after it.)
#include <cstdio>

struct Shape {
  virtual int area() const;
  virtual const char *name() const;
};
struct Square : Shape {
  int s;
  explicit Square(int s) : s(s) {}
  int area() const override;
  const char *name() const override;
};
struct Rect : Shape {
  int w, h;
  Rect(int w, int h) : w(w), h(h) {}
  int area() const override;
};

#pragma omp begin declare target indirect
int Shape::area() const { return 0; }
const char *Shape::name() const { return "shape"; }
int Square::area() const { return s * s; }
const char *Square::name() const { return "square"; }
int Rect::area() const { return w * h; }
int total_area(const Shape *const *shapes, int n) {
  int t = 0;
  for (int i = 0; i < n; i++)
    t += shapes[i]->area();
  return t;
}
#pragma omp end declare target

typedef int (*total_t)(const Shape *const *, int);

int main() {
  int errors = 0;
  int areas[3] = {0, 0, 0}, total = 0, name_len = 0;
  total_t sum = total_area;
#pragma omp target map(from : areas, total, name_len) firstprivate(sum)
  {
    Square sq(3);
    Rect r(2, 5);
    Shape plain;
    const Shape *shapes[3] = {&sq, &r, &plain};
    for (int i = 0; i < 3; i++)
      areas[i] = shapes[i]->area();
    total = sum(shapes, 3);
    const char *n = shapes[0]->name();
    int len = 0;
    while (n[len])
      len++;
    name_len = len;
  }
  std::printf("areas %d %d %d total %d name length %d\n", areas[0], areas[1], areas[2],
              total, name_len);
  if (areas[0] != 9 || areas[1] != 10 || areas[2] != 0 || total != 19 || name_len != 6)
    errors++;

  // Many teams, each building its objects and calling through the host pointer.
  int per_team[8] = {0};
#pragma omp target teams distribute map(from : per_team) firstprivate(sum)
  for (int t = 0; t < 8; t++) {
    Square sq(t);
    Rect r(t, 2);
    const Shape *shapes[2] = {&sq, &r};
    per_team[t] = sum(shapes, 2);
  }
  for (int t = 0; t < 8; t++)
    if (per_team[t] != t * t + 2 * t)
      errors++;
  std::printf("per team: %d %d %d %d %d %d %d %d\n", per_team[0], per_team[1], per_team[2],
              per_team[3], per_team[4], per_team[5], per_team[6], per_team[7]);

  std::printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
