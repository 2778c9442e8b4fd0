// The mapping-rules matrix: constructs (enter data, exit data, target data, target regions with
// explicit and implicit maps, target update, use_device_ptr/use_device_addr) with every map
// type they take, bare and with each modifier clang accepts there (always, close, present,
// ompx_hold), crossed with the state the data is in before the construct (unmapped; mapped
// once, twice, by an enclosing `target data`, with an `ompx_hold` reference, with both, through
// `omp_target_associate_ptr`; as the whole array or as a sub-section) and with the sections the
// construct names (the same, inside, enclosing, overlapping either end, disjoint, zero-length at
// several offsets; one or two items). Each case prints one line; the harness runs the same
// binary under LLVM's runtime and ours and the lines must agree one by one. The programs
// tests/c/map_matrix_*.c pick the constructs, prior states and sections.
//
// A line reads
//   <construct>  prior=<state>  sec=<sections> [| <what the construct saw>] | end ... | post ...
// At each observation point, one character per element of the observed objects (`buf`, or a
// struct and its pointee):
//   d=  the device copy (omp_get_mapped_ptr + omp_target_memcpy), '.' where unmapped
//   h=  the host copy
//   p=  omp_target_is_present per element (1/0), printed only where it disagrees with d=
//   k=  what a target region's kernel read before writing it ('-' not read)
//   r=  the reference count left: how many `exit data map(release: x[i:1])` it takes until
//       the element is unmapped ('+': more than 8, an infinite or held count)
// A pointer member shows as two characters: A attached (the device address of its pointee),
// H the host address, N null, ? anything else.
// Values are tagged: each case writes distinct values before each step, so the tag read back
// says which copy happened:
//   p  host value when the prior state was set up     h  host value just before the case
//   d  device value written just before the case      k  written on the device by the case
//   i  host value written inside a `target data` case     (its kernel, or inside target data)
//   a  host value written before the prior state's scope closes (its copy back shows)
//   ?  anything else (a fresh allocation's contents, another case's values)
// Observation points: `mid` inside a `target data` case, `end` right after the case (still
// inside the prior state's scope), `post` after that scope closed, then the reference counts.
//
// Cases that are errors under LLVM (a `present` modifier on data that is not mapped, an
// explicit map that extends a mapping) end the process: each runs in a child process (fork)
// and the parent prints the child's exit status; the runtime's messages are compared through
// `// STDERR`. On a GPU a child is a fork + exec of the program itself with the case's number
// (CUDA cannot be used in a forked child), which starts the device afresh: there, only the
// first error case of each construct runs. Which cases those are is decided here by
// replaying LLVM's lookup on the spans of the prior mapping and the case's items
// (mm_predicted_error); a wrong guess shows as a program that aborts under LLVM's runtime.
#include <omp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "on_gpu.h"

// Each program uses part of what this header offers.
#pragma clang diagnostic ignored "-Wunused-function"

// The pragma's text is macro-expanded first, so clauses may come from macro arguments.
#define MM_PRAGMA(x) MM_PRAGMA_(x)
#define MM_PRAGMA_(x) _Pragma(#x)
#define MM_UNWRAP(...) __VA_ARGS__
#define MM_STR(...) MM_STR_(__VA_ARGS__)
#define MM_STR_(...) #__VA_ARGS__

// buf: the array most cases map. Observed whole; sections stay inside it, so a zero-length
// section at any observed offset touches no other variable.
#define MM_CAP 16
static int buf[MM_CAP];
// What a target region's kernel read, per view element (view * MM_CAP + element): a flag that
// it read the element ([0], 0: not read) and the value ([1]). The flag is mapped `tofrom`
// with the values, so it starts at 0 on the device whatever a fresh allocation holds; a value
// read from fresh device memory shows '?' whatever the allocator left there (a pool may hand
// back an earlier case's `seen`), never '-'.
static int seen[2 * MM_CAP][2];
// Records the first value the kernel reads from element j (seen's index).
#define MM_SEE(j, value)                                                                        \
  if (!seen[j][0]) {                                                                            \
    seen[j][0] = 1;                                                                             \
    seen[j][1] = (value);                                                                       \
  }

// ---------------------------------------------------------------- observed objects
// A view: `n` ints from `base`. `ptr_slot` (or -1) is the first of the two ints that hold a
// pointer member; its pointee is view `pointee`.
typedef struct {
  int *base;
  int n;
  int ptr_slot, pointee;
} mm_view;
static mm_view mm_views[2] = {{buf, MM_CAP, -1, -1}};
static int mm_nviews = 1;

enum { TAG_P = 1, TAG_H, TAG_D, TAG_K, TAG_I, TAG_A };
static const char mm_tag_char[] = "?phdkia";

// The case being run: its number (part of every value, so stale data reads as '?'), its
// sections, the prior state's section.
static struct {
  unsigned serial;
  int lo, len, lo2, len2; // the case's sections (len2 < 0: one item)
  int plo, plen;          // the prior state's section of buf
  int dev, host;
} mm;

// The value of element i of view v for a tag: serial, tag and element, so a stale or foreign
// value never decodes as this case's.
static int mm_value(int tag, int v, int i) {
  return (int)(((mm.serial * 8u + (unsigned)tag) << 5) | (unsigned)(v * MM_CAP + i));
}

static char mm_decode(int value, int v, int i) {
  unsigned u = (unsigned)value;
  if ((int)(u & 31u) != v * MM_CAP + i || (u >> 8) != mm.serial) return '?';
  unsigned tag = (u >> 5) & 7u;
  return tag >= 1 && tag <= 6 ? mm_tag_char[tag] : '?';
}

static int mm_is_ptr(int v, int i) {
  int s = mm_views[v].ptr_slot;
  return s >= 0 && (i == s || i == s + 1);
}

static void mm_set_host(int tag) {
  for (int v = 0; v < mm_nviews; v++)
    for (int i = 0; i < mm_views[v].n; i++)
      if (!mm_is_ptr(v, i)) mm_views[v].base[i] = mm_value(tag, v, i);
}

static void *mm_mapped_at(void *host) { return omp_get_mapped_ptr(host, mm.dev); }
static void *mm_mapped(int v, int i) { return mm_mapped_at(&mm_views[v].base[i]); }

// Writes tag's values into every element that has a device copy.
static void mm_set_device(int tag) {
  for (int v = 0; v < mm_nviews; v++)
    for (int i = 0; i < mm_views[v].n; i++) {
      void *d = mm_mapped(v, i);
      if (!d || mm_is_ptr(v, i)) continue;
      int value = mm_value(tag, v, i);
      omp_target_memcpy(d, &value, sizeof value, 0, 0, mm.dev, mm.host);
    }
}

// A pointer's class: A the device address of its pointee (measured from the first element
// of the pointee that has a device copy), H the pointee's host address, N null, ? else.
static char mm_ptr_class(uintptr_t p, int pointee) {
  const mm_view *w = &mm_views[pointee];
  if (p == 0) return 'N';
  if (p == (uintptr_t)w->base) return 'H';
  for (int j = 0; j < w->n; j++) {
    uintptr_t d = (uintptr_t)mm_mapped(pointee, j);
    if (d) return p == d - (uintptr_t)j * sizeof(int) ? 'A' : '?';
  }
  return '?';
}

static void mm_append(char *line, size_t cap, const char *fmt, const char *s) {
  size_t n = strlen(line);
  snprintf(line + n, cap - n, fmt, s);
}

// Where an address the program got from the runtime points, for element `host_i` of view v:
// null (null+N: N elements past null), the host element itself (host), the device copy of
// element k of that view (dev@k: exactly an element's device copy, else measured from the
// first element that has one, within the view's reach), or other.
static void mm_where(char *out, size_t cap, uintptr_t got, int v, int host_i) {
  const mm_view *w = &mm_views[v];
  if (got == 0) {
    snprintf(out, cap, "null");
    return;
  }
  if (got < 4096) {
    snprintf(out, cap, "null+%d", (int)(got / sizeof(int)));
    return;
  }
  if (got == (uintptr_t)&w->base[host_i]) {
    snprintf(out, cap, "host");
    return;
  }
  for (int k = 0; k < w->n; k++)
    if (mm_mapped(v, k) && got == (uintptr_t)mm_mapped(v, k)) {
      snprintf(out, cap, "dev@%d", k);
      return;
    }
  snprintf(out, cap, "other");
  for (int j = 0; j < w->n; j++) {
    uintptr_t d = (uintptr_t)mm_mapped(v, j);
    if (!d) continue;
    for (int k = -w->n; k < 2 * w->n; k++)
      if (got == d + (uintptr_t)((long)(k - j) * (long)sizeof(int))) snprintf(out, cap, "dev@%d", k);
    return;
  }
}

// Appends " | NAME d=... h=..." for every view.
static void mm_observe(char *line, size_t cap, const char *name) {
  mm_append(line, cap, " | %s", name);
  for (int v = 0; v < mm_nviews; v++) {
    const mm_view *w = &mm_views[v];
    char p[MM_CAP + 1], d[MM_CAP + 1], h[MM_CAP + 1];
    for (int i = 0; i < w->n; i++) {
      p[i] = omp_target_is_present(&w->base[i], mm.dev) ? '1' : '0';
      void *dp = mm_mapped(v, i);
      if (mm_is_ptr(v, i)) {
        // Both halves of the pointer show its class.
        int s = w->ptr_slot;
        void *dq = mm_mapped(v, s);
        uintptr_t dv = 0;
        int ok = dq && mm_mapped(v, s + 1) &&
                 omp_target_memcpy(&dv, dq, sizeof dv, 0, 0, mm.host, mm.dev) == 0;
        d[i] = ok ? mm_ptr_class(dv, w->pointee) : '.';
        uintptr_t hv;
        memcpy(&hv, &w->base[s], sizeof hv);
        h[i] = mm_ptr_class(hv, w->pointee);
        continue;
      }
      int value = 0;
      if (dp && omp_target_memcpy(&value, dp, sizeof value, 0, 0, mm.host, mm.dev) == 0)
        d[i] = mm_decode(value, v, i);
      else
        d[i] = dp ? '!' : '.';
      h[i] = mm_decode(w->base[i], v, i);
    }
    p[w->n] = d[w->n] = h[w->n] = 0;
    // omp_target_is_present looks up one byte, as omp_get_mapped_ptr does: its string is
    // printed only where the two disagree.
    int agree = 1;
    for (int i = 0; i < w->n; i++) agree &= (p[i] == '1') == (d[i] != '.');
    mm_append(line, cap, " d=%s", d);
    mm_append(line, cap, " h=%s", h);
    if (!agree) mm_append(line, cap, " p=%s", p);
  }
}

// What the kernel read (the cases that run one).
static void mm_observe_kernel(char *line, size_t cap) {
  for (int v = 0; v < mm_nviews; v++) {
    char k[MM_CAP + 1];
    for (int i = 0; i < mm_views[v].n; i++) {
      int *s = seen[v * MM_CAP + i];
      k[i] = s[0] ? mm_decode(s[1], v, i) : '-';
    }
    k[mm_views[v].n] = 0;
    mm_append(line, cap, " k=%s", k);
  }
}

// The reference counts left: releases one element at a time; destroys the mappings it counts.
static void mm_refs(char *line, size_t cap) {
  for (int v = 0; v < mm_nviews; v++) {
    int *x = mm_views[v].base, n = mm_views[v].n;
    char r[MM_CAP + 1];
    memset(r, '.', (size_t)n);
    r[n] = 0;
    for (int i = 0; i < n; i++) {
      if (r[i] != '.' || !mm_mapped(v, i)) continue;
      int before[MM_CAP];
      for (int j = i; j < n; j++) before[j] = mm_mapped(v, j) != NULL;
      int count = 0;
      while (mm_mapped(v, i) && count <= 8) {
        MM_PRAGMA(omp target exit data map(release : x[i:1]))
        count++;
      }
      char c = mm_mapped(v, i) ? '+' : (char)('0' + count);
      for (int j = i; j < n; j++)
        if (before[j] && (j == i || !mm_mapped(v, j))) r[j] = c;
    }
    mm_append(line, cap, " r=%s", r);
  }
}

// ---------------------------------------------------------------- spans and LLVM's lookup
// A host interval a prior state maps or a case's item names, and the base a zero-length
// lookup measures from (the array or struct the section belongs to; the section itself for an
// association).
typedef struct {
  uintptr_t lo, hi, base;
} mm_span;

#define MM_MAX_SPANS 8
typedef struct {
  mm_span s[MM_MAX_SPANS];
  int n;
} mm_spans;

static void mm_add(mm_spans *l, const void *lo, size_t size, const void *base) {
  mm_span s = {(uintptr_t)lo, (uintptr_t)lo + size, (uintptr_t)base};
  l->s[l->n++] = s;
}

// LLVM's lookupMapping: 2 contained, 1 overlapping a mapping without being inside it (an
// extension), 0 not found. A zero-length item is contained from a mapping's base to its end.
static int mm_lookup(const mm_spans *table, mm_span item) {
  const mm_span *left = NULL, *right = NULL;
  for (int i = 0; i < table->n; i++) {
    const mm_span *e = &table->s[i];
    if (e->lo <= item.lo && (!left || e->lo > left->lo)) left = e;
    if (e->lo > item.lo && (!right || e->lo < right->lo)) right = e;
  }
  if (item.hi == item.lo) {
    if (left && (item.lo < left->hi || item.lo < left->base)) return 2;
    if (right && item.lo >= right->base) return 2;
    return 0;
  }
  if (left && item.lo < left->hi) return item.hi <= left->hi ? 2 : 1;
  if (right && item.hi > right->lo) return 1;
  return 0;
}

// ---------------------------------------------------------------- constructs
// kind: how the construct treats an item that is not inside a mapping.
enum {
  K_MAP,  // enter data, target data, target with an explicit map: extension is an error
  K_EXIT, // exit data: such an item is ignored
  K_MOVE, // target update, implicit maps, use_device_ptr/addr: never an error without present
};
// A row of a program's table: the construct as printed (its clause text), the function that
// runs it, its kind, the spans of its items in the order the runtime enters them. Whether it
// has `present` and whether it runs a kernel come from the name.
typedef struct {
  const char *name;
  void (*run)(char *line, size_t cap);
  int kind;
  void (*items)(mm_spans *out);
  // The lookups of its use_device_ptr/use_device_addr items, after its map items (or NULL).
  void (*returns)(mm_spans *out);
  // The members clang passes after a struct's combined item (MEMBER_OF), or NULL.
  void (*members)(mm_spans *out);
} mm_construct;

static int mm_is_present(const mm_construct *c) { return strstr(c->name, "present") != NULL; }
static int mm_runs_kernel(const mm_construct *c) {
  return strncmp(c->name, "target ", 7) == 0 && !strstr(c->name, "&buf");
}

// The items of a construct on buf: its one or two sections.
static void mm_buf_items(mm_spans *out) {
  mm_add(out, &buf[mm.lo], (size_t)mm.len * sizeof(int), buf);
  if (mm.len2 >= 0) mm_add(out, &buf[mm.lo2], (size_t)mm.len2 * sizeof(int), buf);
}
static void mm_no_items(mm_spans *out) { (void)out; }

// The generated constructs on buf read mm.lo / mm.len (and mm.lo2 / mm.len2). With
// MM_NOWAIT defined, the stand-alone data constructs are `nowait` (a deferred target task)
// and each is followed by a `taskwait`: the same rules must hold for the asynchronous form.
#ifdef MM_NOWAIT
#define MM_NW nowait
#define MM_NW_WAIT MM_PRAGMA(omp taskwait)
#else
#define MM_NW
#define MM_NW_WAIT
#endif
#define MM_ENTER(ID, ...)                                                                       \
  static void ID(char *line, size_t cap) {                                                      \
    (void)line; (void)cap;                                                                      \
    int lo = mm.lo, len = mm.len;                                                               \
    MM_PRAGMA(omp target enter data map(__VA_ARGS__ : buf[lo:len]) MM_NW)                       \
    MM_NW_WAIT                                                                                  \
  }
#define MM_EXIT(ID, ...)                                                                        \
  static void ID(char *line, size_t cap) {                                                      \
    (void)line; (void)cap;                                                                      \
    int lo = mm.lo, len = mm.len;                                                               \
    MM_PRAGMA(omp target exit data map(__VA_ARGS__ : buf[lo:len]) MM_NW)                        \
    MM_NW_WAIT                                                                                  \
  }
#define MM_UPDATE(ID, ...)                                                                      \
  static void ID(char *line, size_t cap) {                                                      \
    (void)line; (void)cap;                                                                      \
    int lo = mm.lo, len = mm.len;                                                               \
    MM_PRAGMA(omp target update __VA_ARGS__ MM_NW)                                              \
    MM_NW_WAIT                                                                                  \
  }
// The inside of a `target data` case: observed, then the device copy and the host copy get
// new values so the copy back at its end shows.
static void mm_inside_data(char *line, size_t cap) {
  mm_observe(line, cap, "mid");
  mm_set_device(TAG_K);
  mm_set_host(TAG_I);
}
#define MM_DATA(ID, ...)                                                                        \
  static void ID(char *line, size_t cap) {                                                      \
    int lo = mm.lo, len = mm.len;                                                               \
    MM_PRAGMA(omp target data map(__VA_ARGS__ : buf[lo:len]))                                   \
    mm_inside_data(line, cap);                                                                  \
  }
// A target region: the kernel records what it finds in the section, then writes it.
#define MM_TARGET(ID, ...)                                                                      \
  static void ID(char *line, size_t cap) {                                                      \
    (void)line; (void)cap;                                                                      \
    int lo = mm.lo, len = mm.len, k0 = mm_value(TAG_K, 0, 0);                                   \
    MM_PRAGMA(omp target map(__VA_ARGS__ : buf[lo:len]) map(tofrom : seen[0:MM_CAP]))           \
    for (int i = lo; i < lo + len; i++) {                                                       \
      MM_SEE(i, buf[i]);                                                                        \
      buf[i] = k0 | i;                                                                          \
    }                                                                                           \
  }

// The modifiers each construct takes, crossed with one map type.
#define MM_MODS_ENTER(X, P, T)                                                                  \
  X(P##_##T, T) X(P##_always_##T, always, T) X(P##_close_##T, close, T)                         \
  X(P##_present_##T, present, T) X(P##_always_present_##T, always, present, T)
#define MM_MODS_DATA(X, P, T)                                                                   \
  MM_MODS_ENTER(X, P, T) X(P##_hold_##T, ompx_hold, T) X(P##_always_hold_##T, always, ompx_hold, T)

// ---------------------------------------------------------------- prior states
enum { P_NONE, P_ENTER, P_ENTER2, P_DATA, P_HOLD, P_HOLD_ENTER, P_ASSOC };
static const char *const mm_prior_kind[] = {"none", "enter", "enter2", "data", "hold", "hold+enter", "assoc"};
// How a prior state maps its item: `run(kind, body)` sets the state up, calls body inside its
// scope and closes the scope; `spans` lists what it maps.
typedef struct {
  const char *name;
  void (*run)(int kind, void (*body)(void));
  void (*spans)(mm_spans *out);
  void *assoc_host; // the host address an association needs (NULL: cannot be associated)
  size_t assoc_size;
} mm_item;
typedef struct {
  int kind;
  const mm_item *item;
  int lo, len; // buf's section, for the items on buf
} mm_prior;

// A prior state's function for one item: every kind of state, with ITEM in the clauses.
#define MM_PRIOR_ITEM(ID, ...)                                                                  \
  static void ID(int kind, void (*body)(void)) {                                                \
    int lo = mm.plo, len = mm.plen;                                                             \
    (void)lo; (void)len;                                                                        \
    switch (kind) {                                                                             \
    case P_ENTER: {                                                                             \
      MM_PRAGMA(omp target enter data map(to : __VA_ARGS__))                                    \
      body();                                                                                   \
      break;                                                                                    \
    }                                                                                           \
    case P_ENTER2: {                                                                            \
      MM_PRAGMA(omp target enter data map(to : __VA_ARGS__))                                    \
      MM_PRAGMA(omp target enter data map(to : __VA_ARGS__))                                    \
      body();                                                                                   \
      break;                                                                                    \
    }                                                                                           \
    case P_DATA:                                                                                \
      MM_PRAGMA(omp target data map(tofrom : __VA_ARGS__))                                      \
      body();                                                                                   \
      break;                                                                                    \
    case P_HOLD:                                                                                \
      MM_PRAGMA(omp target data map(ompx_hold, tofrom : __VA_ARGS__))                           \
      body();                                                                                   \
      break;                                                                                    \
    case P_HOLD_ENTER:                                                                          \
      MM_PRAGMA(omp target data map(ompx_hold, tofrom : __VA_ARGS__))                           \
      {                                                                                         \
        MM_PRAGMA(omp target enter data map(to : __VA_ARGS__))                                  \
        body();                                                                                 \
      }                                                                                         \
      break;                                                                                    \
    default:                                                                                    \
      body();                                                                                   \
    }                                                                                           \
  }

MM_PRIOR_ITEM(mm_prior_buf, buf[lo:len])
static void mm_prior_buf_spans(mm_spans *out) {
  mm_add(out, &buf[mm.plo], (size_t)mm.plen * sizeof(int), buf);
}
static const mm_item mm_item_buf = {"", mm_prior_buf, mm_prior_buf_spans, NULL, 0};

// The prior states of buf: unmapped, each kind on the whole array and on buf[4:4].
static const mm_prior mm_buf_priors[] = {
    {P_NONE, &mm_item_buf, 0, 0},        {P_ENTER, &mm_item_buf, 0, 12},
    {P_ENTER2, &mm_item_buf, 0, 12},     {P_DATA, &mm_item_buf, 0, 12},
    {P_HOLD, &mm_item_buf, 0, 12},       {P_HOLD_ENTER, &mm_item_buf, 0, 12},
    {P_ASSOC, &mm_item_buf, 0, 12},      {P_ENTER, &mm_item_buf, 4, 4},
    {P_ENTER2, &mm_item_buf, 4, 4},      {P_HOLD, &mm_item_buf, 4, 4},
    {P_ASSOC, &mm_item_buf, 4, 4},
};

// The sections of buf a case names: {lo, len, lo2, len2}, len2 < 0 for one item.
typedef struct {
  int lo, len, lo2, len2;
} mm_section;
static const mm_section mm_buf_sections[] = {
    {0, 12, 0, -1}, // whole (the prior's whole array)
    {4, 4, 0, -1},  // the prior's sub-section
    {5, 2, 0, -1},  // inside the sub-section
    {0, 2, 0, -1},  // disjoint from the sub-section, at the array's base
    {2, 4, 0, -1},  // overlapping the sub-section's start
    {6, 4, 0, -1},  // overlapping the sub-section's end
    {10, 4, 0, -1}, // overlapping the whole array's end
    {5, 0, 0, -1},  // zero-length inside both
    {0, 0, 0, -1},  // zero-length at the base (before the sub-section)
    {4, 0, 0, -1},  // zero-length at the sub-section's start
    {8, 0, 0, -1},  // zero-length at the sub-section's end
    {12, 0, 0, -1}, // zero-length at the whole array's end
};

// ---------------------------------------------------------------- a matrix
typedef struct mm_matrix mm_matrix;
static const mm_matrix *mm_the;
struct mm_matrix {
  const mm_construct *constructs;
  int nconstructs;
  const mm_prior *priors;
  int npriors;
  const mm_section *sections;
  int nsections;
  // Whether construct c takes section s (an implicit whole-array map names none).
  int (*applicable)(const mm_construct *c, int s);
  // Sets the observed objects up before each case (pointer members).
  void (*reset)(void);
  // Which cases the program runs (NULL: all), e.g. mm_returns_found.
  int (*keep)(const mm_construct *c, const mm_prior *p);
};

// Replays LLVM's lookups of a case: the prior state's mappings, then the construct's items in
// order (each new mapping joins the table). Returns 1 when an item is an error: a `present`
// item not inside a mapping, or an explicit item of K_MAP extending one. `table` is left as
// the construct's entry leaves it.
static int mm_replay(const mm_construct *c, const mm_prior *p, mm_spans *table) {
  mm_spans items = {.n = 0};
  table->n = 0;
  if (p->kind != P_NONE) {
    p->item->spans(table);
    if (p->kind == P_ASSOC)
      for (int i = 0; i < table->n; i++) table->s[i].base = table->s[i].lo;
  }
  c->items(&items);
  for (int i = 0; i < items.n; i++) {
    int rel = mm_lookup(table, items.s[i]);
    if (c->kind == K_MAP && rel == 1) return 1;
    if (mm_is_present(c) && rel != 2) return 1;
    // A new mapping, which the construct's later items may find or extend.
    if (c->kind == K_MAP && rel == 0 && items.s[i].hi > items.s[i].lo && table->n < MM_MAX_SPANS)
      table->s[table->n++] = items.s[i];
  }
  return 0;
}

static int mm_predicted_error(const mm_construct *c, const mm_prior *p) {
  mm_spans table;
  return mm_replay(c, p, &table);
}

// Whether every use_device_ptr/use_device_addr lookup of a case finds a mapping (a `keep`).
static int mm_returns_found(const mm_construct *c, const mm_prior *p) {
  mm_spans table, returns = {.n = 0};
  if (mm_replay(c, p, &table) || !c->returns) return 1;
  c->returns(&returns);
  for (int i = 0; i < returns.n; i++)
    if (mm_lookup(&table, returns.s[i]) != 2) return 0;
  return 1;
}
static int mm_returns_not_found(const mm_construct *c, const mm_prior *p) {
  return !mm_returns_found(c, p);
}

static const mm_construct *mm_current;
static char *mm_line;
static size_t mm_cap;

// The case inside the prior state's scope: device and host values, the construct, the
// observations, then new host values so the scope's copy back shows.
static void mm_case_body(void) {
  mm_set_device(TAG_D);
  mm_set_host(TAG_H);
  memset(seen, 0, sizeof seen);
  mm_current->run(mm_line, mm_cap);
  mm_observe(mm_line, mm_cap, "end");
  if (mm_runs_kernel(mm_current)) mm_observe_kernel(mm_line, mm_cap);
  mm_set_host(TAG_A);
}

static void mm_format_section(char *out, size_t cap, const mm_section *s) {
  if (s->len2 >= 0)
    snprintf(out, cap, "%d:%d,%d:%d", s->lo, s->len, s->lo2, s->len2);
  else
    snprintf(out, cap, "%d:%d", s->lo, s->len);
}

static void mm_header(char *line, size_t cap, const mm_construct *c, const mm_prior *p,
                      const mm_section *s) {
  char prior[64], sec[32];
  if (p->kind == P_NONE)
    snprintf(prior, sizeof prior, "none");
  else if (p->item == &mm_item_buf)
    snprintf(prior, sizeof prior, "%s@%d:%d", mm_prior_kind[p->kind], p->lo, p->len);
  else
    snprintf(prior, sizeof prior, "%s@%s", mm_prior_kind[p->kind], p->item->name);
  mm_format_section(sec, sizeof sec, s);
  if (mm_the->nsections > 1)
    snprintf(line, cap, "%-30s prior=%-16s sec=%s", c->name, prior, sec);
  else
    snprintf(line, cap, "%-34s prior=%s", c->name, prior);
}

static void mm_select(const mm_prior *p, const mm_section *s) {
  mm.lo = s->lo;
  mm.len = s->len;
  mm.lo2 = s->lo2;
  mm.len2 = s->len2;
  mm.plo = p->lo;
  mm.plen = p->len;
}

// One whole case: header, prior state, construct, observations, into line.
static void mm_run_case(const mm_construct *c, const mm_prior *p, const mm_section *s,
                        unsigned serial, char *line, size_t cap) {
  mm.serial = serial;
  mm_select(p, s);
  if (mm_the->reset) mm_the->reset();
  mm_set_host(TAG_P);
  mm_header(line, cap, c, p, s);
  mm_current = c;
  mm_line = line;
  mm_cap = cap;
  if (p->kind == P_ASSOC) {
    // The association maps the item's span onto a block of its own; the device copy is
    // filled as a mapping's copy in would.
    mm_spans sp = {.n = 0};
    p->item->spans(&sp);
    size_t size = sp.s[0].hi - sp.s[0].lo;
    char *block = omp_target_alloc(size, mm.dev);
    int rc = omp_target_associate_ptr((void *)sp.s[0].lo, block, size, 0, mm.dev);
    omp_target_memcpy(block, (void *)sp.s[0].lo, size, 0, 0, mm.dev, mm.host);
    mm_case_body();
    int rd = omp_target_disassociate_ptr((void *)sp.s[0].lo, mm.dev);
    omp_target_free(block, mm.dev);
    char res[32];
    snprintf(res, sizeof res, "%d,%d", rc, rd);
    mm_append(line, cap, " | assoc,disassoc=%s", res);
  } else {
    p->item->run(p->kind, mm_case_body);
  }
  mm_observe(line, cap, "post");
  mm_refs(line, cap);
  for (int v = 0; v < mm_nviews; v++)
    for (int i = 0; i < mm_views[v].n; i++)
      if (mm_mapped(v, i)) {
        mm_append(line, cap, "%s", " LEFT-MAPPED");
        int *x = mm_views[v].base;
        MM_PRAGMA(omp target exit data map(delete : x[i:1]))
      }
}

static void mm_select(const mm_prior *p, const mm_section *s);

// Whether (construct c, prior p, section s) is one of the program's cases.
static int mm_is_case(const mm_matrix *m, int c, int p, int s) {
  if (m->applicable && !m->applicable(&m->constructs[c], s)) return 0;
  if (!m->keep) return 1;
  mm_select(&m->priors[p], &m->sections[s]);
  return m->keep(&m->constructs[c], &m->priors[p]);
}

// Case number k's (construct, prior, section); 0 when there are fewer cases.
static int mm_nth(const mm_matrix *m, int k, int *c, int *p, int *s) {
  for (*c = 0; *c < m->nconstructs; (*c)++)
    for (*s = 0; *s < m->nsections; (*s)++)
      for (*p = 0; *p < m->npriors; (*p)++)
        if (mm_is_case(m, *c, *p, *s) && k-- == 0) return 1;
  return 0;
}

static void mm_run_nth(const mm_matrix *m, int k) {
  int c, p, s;
  if (!mm_nth(m, k, &c, &p, &s)) abort();
  char line[2048];
  mm_run_case(&m->constructs[c], &m->priors[p], &m->sections[s], (unsigned)k + 1, line,
              sizeof line);
  printf("%s\n", line);
  fflush(stdout);
}

// argv[1], when given, is a case to run alone (the child of a GPU run).
static int mm_main(const mm_matrix *m, int argc, char **argv) {
  // Line by line, so that a case that ends the process unexpectedly shows where.
  setvbuf(stdout, NULL, _IOLBF, 0);
  mm_the = m;
  mm.dev = omp_get_default_device();
  mm.host = omp_get_initial_device();
  if (argc > 1) {
    mm_run_nth(m, atoi(argv[1]));
    return 0;
  }
  // MAP_MATRIX_EXEC=1 takes the GPU's path on the host.
  int one_per_construct = default_device_is_gpu() || getenv("MAP_MATRIX_EXEC") != NULL;
#ifdef MM_NOWAIT
  // A forked child has none of libomp's helper threads, which run the nowait form's target
  // tasks (libomp crashes or hangs there, under either runtime): every child execs.
  int exec_children = 1;
#else
  int exec_children = one_per_construct;
#endif
  int total = 0, children = 0;
  for (int c = 0; c < m->nconstructs; c++) {
    int construct_children = 0;
    for (int s = 0; s < m->nsections; s++)
      for (int p = 0; p < m->npriors; p++) {
        if (!mm_is_case(m, c, p, s)) continue;
        int k = total++;
        mm_select(&m->priors[p], &m->sections[s]);
        if (!mm_predicted_error(&m->constructs[c], &m->priors[p])) {
          mm_run_nth(m, k);
          continue;
        }
        // A child that execs starts the device afresh (a CUDA context: a good part of a
        // second): one error case per construct there, the others named but not run.
        if (one_per_construct && construct_children > 0) {
          char line[256];
          mm_header(line, sizeof line, &m->constructs[c], &m->priors[p], &m->sections[s]);
          printf("%s | child not run (one error case per construct with exec)\n", line);
          continue;
        }
        construct_children++;
        children++;
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
          if (exec_children) {
            char arg[16];
            snprintf(arg, sizeof arg, "%d", k);
            execl("/proc/self/exe", argv[0], arg, (char *)NULL);
            _exit(127);
          }
          mm_run_nth(m, k);
          _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        char line[256];
        mm_header(line, sizeof line, &m->constructs[c], &m->priors[p], &m->sections[s]);
        printf("%s | child %s %d\n", line, WIFSIGNALED(status) ? "signal" : "exit",
               WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
      }
  }
  printf("%d cases, %d in child processes\n", total, children);
  return 0;
}

// The matrix of constructs on buf: every prior state of buf, sections `sections`, the cases
// `keep` selects (NULL: all).
#define MM_BUF_MAIN(CONSTRUCTS, SECTIONS, APPLICABLE, KEEP)                                     \
  int main(int argc, char **argv) {                                                             \
    static const mm_matrix m = {                                                                \
        CONSTRUCTS, (int)(sizeof CONSTRUCTS / sizeof CONSTRUCTS[0]),                            \
        mm_buf_priors, (int)(sizeof mm_buf_priors / sizeof mm_buf_priors[0]),                   \
        SECTIONS, (int)(sizeof SECTIONS / sizeof SECTIONS[0]), APPLICABLE, NULL, KEEP};         \
    return mm_main(&m, argc, argv);                                                             \
  }
