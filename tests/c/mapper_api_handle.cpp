// __tgt_mapper_num_components / __tgt_push_mapper_component on handles the program creates
// itself, as LLVM's own test (declare_mapper_api.cpp) does: a std::vector of 40-byte
// components (LLVM up to 17) and LLVM 19's llvm::SmallVector<MapComponentInfoTy> (pointer,
// 32-bit size, 32-bit capacity, one inline element); and, from a mapper function the program
// passes to __tgt_target_data_begin_mapper itself, the handle the runtime creates, read as
// LLVM 19's SmallVector.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <omp.h>
#include <vector>

struct MapComponentInfoTy {
  void *Base;
  void *Begin;
  int64_t Size;
  int64_t Type;
  void *Name;
  MapComponentInfoTy() = default;
  MapComponentInfoTy(void *Base, void *Begin, int64_t Size, int64_t Type, void *Name)
      : Base(Base), Begin(Begin), Size(Size), Type(Type), Name(Name) {}
};

struct MapperComponentsTy {
  std::vector<MapComponentInfoTy> Components;
};

struct SmallMapperComponentsTy {
  MapComponentInfoTy *BeginX;
  uint32_t Size, Capacity;
  MapComponentInfoTy Inline[1];
};

extern "C" {
int64_t __tgt_mapper_num_components(void *rt_mapper_handle);
void __tgt_push_mapper_component(void *rt_mapper_handle, void *base, void *begin, int64_t size,
                                 int64_t type, void *name);
void __tgt_target_data_begin_mapper(void *loc, int64_t device_id, int32_t arg_num,
                                    void **args_base, void **args, int64_t *arg_sizes,
                                    int64_t *arg_types, void **arg_names, void **arg_mappers);
void __tgt_target_data_end_mapper(void *loc, int64_t device_id, int32_t arg_num,
                                  void **args_base, void **args, int64_t *arg_sizes,
                                  int64_t *arg_types, void **arg_names, void **arg_mappers);
}

// What the mapper saw in the runtime's handle.
static int64_t seen_before = -1, seen_after = -1;
static uint32_t seen_size = 0, seen_capacity = 0;
static int seen_first_begin_ok = 0;

// A mapper that maps its item's first half with the item's map type and its second half
// without copies, reading the handle as LLVM 19's SmallVector between the pushes.
extern "C" void half_mapper(void *h, void *base, void *begin, int64_t size, int64_t type,
                            void *name) {
  seen_before = __tgt_mapper_num_components(h);
  __tgt_push_mapper_component(h, base, begin, size / 2, type, name);
  __tgt_push_mapper_component(h, base, (char *)begin + size / 2, size - size / 2, 0, name);
  seen_after = __tgt_mapper_num_components(h);
  SmallMapperComponentsTy *S = (SmallMapperComponentsTy *)h;
  seen_size = S->Size;
  seen_capacity = S->Capacity;
  seen_first_begin_ok = S->BeginX[0].Begin == begin && S->BeginX[1].Size == size - size / 2;
}

int main() {
  int errors = 0;
  int x[8];
  {
    MapperComponentsTy MC;
    std::printf("std::vector handle: num=%" PRId64 "\n", __tgt_mapper_num_components(&MC));
    __tgt_push_mapper_component(&MC, x, x, 4, 1, nullptr);
    __tgt_push_mapper_component(&MC, x, x + 1, 8, 2, nullptr);
    int64_t num = __tgt_mapper_num_components(&MC);
    std::printf("std::vector handle: num=%" PRId64 "\n", num);
    if (num != 2) errors++;
  }

  SmallMapperComponentsTy S;
  S.BeginX = S.Inline;
  S.Size = 0;
  S.Capacity = 1;
  for (int i = 0; i < 5; ++i)
    __tgt_push_mapper_component(&S, x, x + i, 4 * (i + 1), 0x1000000000000 * (i + 1) | 3,
                                nullptr);
  int64_t num = __tgt_mapper_num_components(&S);
  std::printf("SmallVector handle: num=%" PRId64 " size=%u grown=%d\n", num, S.Size,
              S.BeginX != S.Inline && S.Capacity >= 5);
  if (num != 5 || S.Size != 5) errors++;
  for (uint32_t i = 0; i < S.Size; ++i) {
    const MapComponentInfoTy &C = S.BeginX[i];
    std::printf("  [%u] base=x+%d begin=x+%d size=%" PRId64 " type=%#" PRIx64 " name=%p\n", i,
                (int)((int *)C.Base - x), (int)((int *)C.Begin - x), C.Size, (uint64_t)C.Type,
                C.Name);
    if (C.Begin != x + i || C.Size != 4 * (i + 1)) errors++;
  }
  if (S.BeginX != S.Inline) std::free(S.BeginX);

  /* the runtime's own handle, filled by a mapper the program passes */
  int data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int dev = omp_get_default_device();
  void *bases[1] = {data}, *begins[1] = {data}, *mappers[1] = {(void *)half_mapper};
  int64_t sizes[1] = {sizeof data}, types[1] = {1 /* to */};
  __tgt_target_data_begin_mapper(nullptr, dev, 1, bases, begins, sizes, types, nullptr, mappers);
  std::printf("runtime handle: before=%" PRId64 " after=%" PRId64 " size=%u capacity>=2:%d first=%d\n",
              seen_before, seen_after, seen_size, seen_capacity >= 2, seen_first_begin_ok);
  if (seen_before != 0 || seen_after != 2 || seen_size != 2 || !seen_first_begin_ok) errors++;
  int present = omp_target_is_present(data, dev) && omp_target_is_present(data + 7, dev);
  int first = 0;
#pragma omp target map(from : first)
  { first = data[0] + data[3]; }
  std::printf("runtime handle: present=%d device data[0]+data[3]=%d\n", present, first);
  if (!present || first != 5) errors++;
  types[0] = 0; /* release */
  __tgt_target_data_end_mapper(nullptr, dev, 1, bases, begins, sizes, types, nullptr, mappers);

  std::printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
