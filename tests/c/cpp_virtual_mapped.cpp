// HOST-ONLY: clang 19 registers no vtables: a virtual call through a mapped object reaches the host vtable, which only the host device can read
// Objects of classes with virtual functions mapped to a target region. clang 22 registers the
// vtables of the classes a region maps (offload entry flag 0x20: the entry's size is the
// vtable's, its device symbol one pointer to the device vtable); LLVM 22 maps each host vtable
// to itself and gives a GPU's device runtime the slot-by-slot translation. clang 19 registers
// nothing for them. Virtual calls through the mapped objects must reach the right overrider.
#include <omp.h>
#include <cstdio>

struct Base {
  virtual int get() const { return 1; }
  virtual ~Base() {}
};
struct Derived : Base {
  int v = 40;
  int get() const override { return v + 2; }
};

int main() {
  Derived d;
  Base *pb = &d;
  int dev = omp_get_default_device();
  void *vtable = *(void **)&d;
  int r1 = 0, r2 = 0;
#pragma omp target map(to : d) map(from : r1)
  r1 = d.get();
  // The object is mapped whole; the base-class pointer is translated to its device copy (an
  // unmapped pointer is a zero-length array section). Mapping `pb[0:1]` would map only the
  // Base part and the call would read `v` past the mapped bytes.
#pragma omp target data map(to : d)
  {
#pragma omp target map(from : r2)
    r2 = pb->get();
  }
  std::printf("virtual calls: %d %d\n", r1, r2);
  std::printf("vtable present: %d, mapped to itself: %d\n", omp_target_is_present(vtable, dev),
              omp_get_mapped_ptr(vtable, dev) == vtable);
  return r1 == 42 && r2 == 42 ? 0 : 1;
}
