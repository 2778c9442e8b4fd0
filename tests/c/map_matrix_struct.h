// The struct constructs of the mapping-rules matrix (map_matrix.h): a struct `s` mapped
// whole, by member, by a section of a member array, by several members (one combined entry),
// a struct and a member in one clause, and the pointee of its pointer member (`map(s.p[0:4])`,
// which attaches the device copy of s.p to the pointee's device copy), through enter data,
// exit data, target data, target regions and target update, against prior states that map
// the struct, a member, a section of a member, the pointee or part of it. The observed objects
// are s (its ints, then its pointer as two characters: A attached, H the host address) and the
// pointee pt. map_matrix_struct.c runs the cases; divergence_member_delete_hold.c the few
// where LLVM's `delete` of a member gives a held entry a dynamic reference.
#include "map_matrix.h"

struct S {
  int a[4]; // elements 0-3
  int x;    // 4
  int b[4]; // 5-8
  int n;    // 9
  int *p;   // 10-11: points at pt
};
_Static_assert(sizeof(struct S) == 48 && offsetof(struct S, p) == 40, "the layout the views assume");
static struct S s;
static int pt[4];

// Clang 19 maps a pointer member's storage with its pointee (PTR_AND_OBJ); clang 20 and later
// map the pointee alone and attach it (ATTACH entries).
#if __clang_major__ >= 20
#define ATTACH_ONLY 1
#else
#define ATTACH_ONLY 0
#endif

// ---------------------------------------------------------------- items
// What each item maps, in the order clang passes it (for the error prediction).
static void sp_s(mm_spans *o) { mm_add(o, &s, sizeof s, &s); }
static void sp_x(mm_spans *o) { mm_add(o, &s.x, sizeof s.x, &s); }
static void sp_b(mm_spans *o) { mm_add(o, s.b, sizeof s.b, &s); }
static void sp_b12(mm_spans *o) { mm_add(o, &s.b[1], 2 * sizeof(int), &s); }
static void sp_ab(mm_spans *o) { mm_add(o, s.a, (size_t)((char *)(s.b + 4) - (char *)s.a), &s); }
static void sp_pt(mm_spans *o) { mm_add(o, pt, sizeof pt, pt); }
static void sp_pt12(mm_spans *o) { mm_add(o, &pt[1], 2 * sizeof(int), pt); }
static void sp_attach(mm_spans *o) {
  if (!ATTACH_ONLY) mm_add(o, &s.p, sizeof s.p, &s);
  sp_pt(o);
}
static void sp_s_attach(mm_spans *o) {
  sp_s(o);
  sp_pt(o);
}
// s.x with s.p[0:4]: one combined entry from s.x to the end of s.p (clang 19, and clang 22's
// target regions); clang 22's data constructs map s.x alone.
static void sp_x_attach_combined(mm_spans *o) {
  mm_add(o, &s.x, (size_t)((char *)(&s.p + 1) - (char *)&s.x), &s);
  sp_pt(o);
}
static void sp_x_attach(mm_spans *o) {
  if (!ATTACH_ONLY) {
    sp_x_attach_combined(o);
    return;
  }
  sp_x(o);
  sp_pt(o);
}

// ---------------------------------------------------------------- kernels
// Records what the kernel finds in element i of view v, then writes it.
#define TOUCH(v, i, lv)                                                                         \
  {                                                                                             \
    MM_SEE((v) * MM_CAP + (i), lv);                                                             \
    (lv) = k0 | ((v) * MM_CAP + (i));                                                           \
  }
#define B_A for (int i = 0; i < 4; i++) TOUCH(0, i, s.a[i])
#define B_X TOUCH(0, 4, s.x)
#define B_B for (int i = 0; i < 4; i++) TOUCH(0, 5 + i, s.b[i])
#define B_B12 for (int i = 1; i < 3; i++) TOUCH(0, 5 + i, s.b[i])
#define B_N TOUCH(0, 9, s.n)
#define B_PT for (int i = 0; i < 4; i++) TOUCH(1, i, s.p[i])
#define B_S B_A B_X B_B B_N

// ---------------------------------------------------------------- constructs
// One item list (ITEMS, parenthesised), every construct: enter to (and present), exit from
// and delete, target data tofrom (and ompx_hold), a target region tofrom (and present)
// running BODY, update to and from (of UITEMS: clang takes a variable once in an update).
#define ITEM_CONSTRUCTS(ID, ITEMS, UITEMS, BODY)                                                        \
  static void ID##_enter(char *l, size_t c) {                                                   \
    (void)l; (void)c;                                                                           \
    MM_PRAGMA(omp target enter data map(to : MM_UNWRAP ITEMS))                                  \
  }                                                                                             \
  static void ID##_enter_present(char *l, size_t c) {                                           \
    (void)l; (void)c;                                                                           \
    MM_PRAGMA(omp target enter data map(present, to : MM_UNWRAP ITEMS))                         \
  }                                                                                             \
  static void ID##_exit_from(char *l, size_t c) {                                               \
    (void)l; (void)c;                                                                           \
    MM_PRAGMA(omp target exit data map(from : MM_UNWRAP ITEMS))                                 \
  }                                                                                             \
  static void ID##_exit_delete(char *l, size_t c) {                                             \
    (void)l; (void)c;                                                                           \
    MM_PRAGMA(omp target exit data map(delete : MM_UNWRAP ITEMS))                               \
  }                                                                                             \
  static void ID##_data(char *l, size_t c) {                                                    \
    MM_PRAGMA(omp target data map(tofrom : MM_UNWRAP ITEMS))                                    \
    mm_inside_data(l, c);                                                                       \
  }                                                                                             \
  static void ID##_data_hold(char *l, size_t c) {                                               \
    MM_PRAGMA(omp target data map(ompx_hold, tofrom : MM_UNWRAP ITEMS))                         \
    mm_inside_data(l, c);                                                                       \
  }                                                                                             \
  static void ID##_target(char *l, size_t c) {                                                  \
    (void)l; (void)c;                                                                           \
    int k0 = mm_value(TAG_K, 0, 0);                                                             \
    MM_PRAGMA(omp target map(tofrom : MM_UNWRAP ITEMS) map(tofrom : seen[0:2 * MM_CAP]))        \
    { BODY }                                                                                    \
  }                                                                                             \
  static void ID##_target_present(char *l, size_t c) {                                          \
    (void)l; (void)c;                                                                           \
    int k0 = mm_value(TAG_K, 0, 0);                                                             \
    MM_PRAGMA(omp target map(present, tofrom : MM_UNWRAP ITEMS) map(tofrom : seen[0:2 * MM_CAP])) \
    { BODY }                                                                                    \
  }                                                                                             \
  static void ID##_update_to(char *l, size_t c) {                                               \
    (void)l; (void)c;                                                                           \
    MM_PRAGMA(omp target update to(MM_UNWRAP UITEMS))                                            \
  }                                                                                             \
  static void ID##_update_from(char *l, size_t c) {                                             \
    (void)l; (void)c;                                                                           \
    MM_PRAGMA(omp target update from(MM_UNWRAP UITEMS))                                          \
  }
#define ITEM_ROWS(ID, TEXT, SPANS, TARGET_SPANS, MEMBERS)                                       \
  {"enter to: " TEXT, ID##_enter, K_MAP, SPANS, NULL, MEMBERS},                                 \
      {"enter present,to: " TEXT, ID##_enter_present, K_MAP, SPANS, NULL, MEMBERS},             \
      {"exit from: " TEXT, ID##_exit_from, K_EXIT, SPANS, NULL, MEMBERS},                       \
      {"exit delete: " TEXT, ID##_exit_delete, K_EXIT, SPANS, NULL, MEMBERS},                   \
      {"data tofrom: " TEXT, ID##_data, K_MAP, SPANS, NULL, MEMBERS},                           \
      {"data hold,tofrom: " TEXT, ID##_data_hold, K_MAP, SPANS, NULL, MEMBERS},                 \
      {"target tofrom: " TEXT, ID##_target, K_MAP, TARGET_SPANS, NULL, MEMBERS},                \
      {"target present,tofrom: " TEXT, ID##_target_present, K_MAP, TARGET_SPANS, NULL, MEMBERS}, \
      {"update to: " TEXT, ID##_update_to, K_MOVE, mm_no_items, NULL, MEMBERS},                 \
      {"update from: " TEXT, ID##_update_from, K_MOVE, mm_no_items, NULL, MEMBERS},

// The members of a struct item with several parts (clang's MEMBER_OF items).
static void mb_ab(mm_spans *o) {
  mm_add(o, s.a, sizeof s.a, &s);
  sp_b(o);
}
static void mb_s_b12(mm_spans *o) {
  sp_s(o);
  sp_b12(o);
}

// (id, items, update items, text, spans, spans in a target region, members, kernel body)
#define ITEMS(X)                                                                                \
  X(i_s, (s), (s), "s", sp_s, sp_s, NULL, B_S)                                                  \
  X(i_x, (s.x), (s.x), "s.x", sp_x, sp_x, NULL, B_X)                                            \
  X(i_b, (s.b), (s.b), "s.b", sp_b, sp_b, NULL, B_B)                                            \
  X(i_b12, (s.b[1:2]), (s.b[1:2]), "s.b[1:2]", sp_b12, sp_b12, NULL, B_B12)                     \
  X(i_ab, (s.a, s.b), (s.a, s.b), "s.a,s.b", sp_ab, sp_ab, mb_ab, B_A B_B)                      \
  X(i_s_b12, (s, s.b[1:2]), (s), "s,s.b[1:2]", sp_s, sp_s, mb_s_b12, B_S)                       \
  X(i_attach, (s.p[0:4]), (s.p[0:4]), "s.p[0:4]", sp_attach, sp_attach, NULL, B_PT)             \
  X(i_s_attach, (s, s.p[0:4]), (s.p[0:4]), "s,s.p[0:4]", sp_s_attach, sp_s_attach, NULL,        \
    B_S B_PT)                                                                                   \
  X(i_x_attach, (s.x, s.p[0:4]), (s.x, s.p[0:4]), "s.x,s.p[0:4]", sp_x_attach,                  \
    sp_x_attach_combined, NULL, B_X B_PT)
#define DEF(ID, ITEMS, UITEMS, TEXT, SPANS, TSPANS, MEMBERS, BODY)                              \
  ITEM_CONSTRUCTS(ID, ITEMS, UITEMS, BODY)
#define ROW(ID, ITEMS, UITEMS, TEXT, SPANS, TSPANS, MEMBERS, BODY)                              \
  ITEM_ROWS(ID, TEXT, SPANS, TSPANS, MEMBERS)
ITEMS(DEF)
static const mm_construct cases[] = {ITEMS(ROW)};

// ---------------------------------------------------------------- prior states
MM_PRIOR_ITEM(prior_s, s)
MM_PRIOR_ITEM(prior_x, s.x)
MM_PRIOR_ITEM(prior_b, s.b)
MM_PRIOR_ITEM(prior_b12, s.b[1:2])
MM_PRIOR_ITEM(prior_ab, s.a, s.b)
MM_PRIOR_ITEM(prior_pt, pt)
MM_PRIOR_ITEM(prior_pt12, pt[1:2])
MM_PRIOR_ITEM(prior_attach, s.p[0:4])
static const mm_item it_s = {"s", prior_s, sp_s, NULL, 0};
static const mm_item it_x = {"s.x", prior_x, sp_x, NULL, 0};
static const mm_item it_b = {"s.b", prior_b, sp_b, NULL, 0};
static const mm_item it_b12 = {"s.b[1:2]", prior_b12, sp_b12, NULL, 0};
static const mm_item it_ab = {"s.a,s.b", prior_ab, sp_ab, NULL, 0};
static const mm_item it_pt = {"pt", prior_pt, sp_pt, NULL, 0};
static const mm_item it_pt12 = {"pt[1:2]", prior_pt12, sp_pt12, NULL, 0};
static const mm_item it_attach = {"s.p[0:4]", prior_attach, sp_attach, NULL, 0};
static const mm_prior priors[] = {
    {P_NONE, &it_s, 0, 0},       {P_ENTER, &it_s, 0, 0},     {P_ENTER2, &it_s, 0, 0},
    {P_HOLD, &it_s, 0, 0},       {P_ASSOC, &it_s, 0, 0},     {P_ENTER, &it_x, 0, 0},
    {P_ENTER, &it_b, 0, 0},      {P_HOLD, &it_b, 0, 0},      {P_ENTER, &it_b12, 0, 0},
    {P_ENTER, &it_ab, 0, 0},     {P_ENTER, &it_pt, 0, 0},    {P_ENTER, &it_pt12, 0, 0},
    {P_ENTER, &it_attach, 0, 0}, {P_HOLD, &it_attach, 0, 0},
};

// A member's `delete` that finds its member in an entry held (ompx_hold) without dynamic
// references while the struct's own item, which would release the count after it, finds no
// mapping: LLVM 19 and 22 set the entry's dynamic count to 1 (it then outlives its hold); the
// count stays 0 (docs/DIVERGENCES.md).
static int held_member_delete(const mm_construct *c, const mm_prior *p) {
  if (strncmp(c->name, "exit delete", 11) != 0 || !c->members || p->kind != P_HOLD) return 0;
  mm_spans table = {.n = 0}, items = {.n = 0}, members = {.n = 0};
  p->item->spans(&table);
  c->items(&items);
  c->members(&members);
  if (mm_lookup(&table, items.s[0]) == 2) return 0;
  for (int i = 0; i < members.n; i++)
    if (mm_lookup(&table, members.s[i]) == 2) return 1;
  return 0;
}
static int other_than_held_member_delete(const mm_construct *c, const mm_prior *p) {
  return !held_member_delete(c, p);
}

static const mm_section one[] = {{0, 0, 0, -1}};

static void reset(void) { s.p = pt; }

static int struct_main(int argc, char **argv, int (*keep)(const mm_construct *, const mm_prior *)) {
  mm_views[0] = (mm_view){(int *)&s, 12, 10, 1};
  mm_views[1] = (mm_view){pt, 4, -1, -1};
  mm_nviews = 2;
  static mm_matrix m = {cases,
                        (int)(sizeof cases / sizeof cases[0]),
                        priors,
                        (int)(sizeof priors / sizeof priors[0]),
                        one,
                        1,
                        NULL,
                        reset,
                        NULL};
  m.keep = keep;
  return mm_main(&m, argc, argv);
}
