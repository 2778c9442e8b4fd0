// An OMPT tool (OpenMP 5.2 §19) loaded with OMP_TOOL_LIBRARIES by the programs that name it
// in a `// TOOL:` directive. It registers the device and target callbacks and prints one
// line per callback, with everything that differs between runs replaced by stable names,
// so that its output under our runtime and under LLVM 19's can be compared:
//   host addresses      h1, h2, ... per host range an allocation (or association) names, in
//                       order of appearance (h2+16 inside one); any other host address (the
//                       runtime's own buffers, memory never mapped) hx: ompt_host_names.h
//   device addresses    d1, d2, ... per allocation seen (d3+16 inside one), else g1, g2, ...;
//                       without EMI (no end events, so no allocated addresses) just "dev"
//   return addresses    FILE+0xOFFSET inside their module (the same binary in both runs)
//   tasks               the initial task is t1, explicit tasks t2, t3, ... in order of creation
//                       (the tool names them through libomp's task callbacks); a target
//                       task's data is named tt1, tt2, ... at its construct's begin event
//   runtime ids         (non-EMI) i1, i2, ... in order of appearance; 0 prints as none
// Target ids and host-op ids of the EMI callbacks are set by the tool (R1.., O1..) and
// checked at the end event. A callback of a construct on another thread than the one that
// began it prints a WRONG-THREAD line.
//
// Environment:
//   OMPT_TOOL_MODE=emi|noemi|both   which callbacks to register (default emi)
//   OMPT_TOOL_UNLOAD=1              also register device_unload and print module ids
//   OMPT_TOOL_PORTABLE=1            output that does not depend on the device kind: return
//                                   addresses numbered r1, r2, ..., only device 0's
//                                   life-cycle callbacks, no device type
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp-tools.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompt_host_names.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int portable, emi = 1, noemi;
static int initial_device = -1;

// ------------------------------------------------------------------ names
#define MAXN 4096
typedef struct {
  uintptr_t key[MAXN];
  int n;
} table_t;

static int find_or_add(table_t *t, uintptr_t key) {
  for (int i = 0; i < t->n; i++)
    if (t->key[i] == key) return i + 1;
  if (t->n == MAXN) return 0;
  t->key[t->n++] = key;
  return t->n;
}

static table_t ids, ras, globals, modules;
static uint64_t next_task = 1, next_target_task = 1;

// Live device allocations: begin, size, name.
static struct {
  uintptr_t begin;
  size_t size;
  int name;
  int live;
} allocs[MAXN];
static int nallocs, alloc_names;

static void name_dev(char *out, size_t n, uintptr_t p) {
  if (!p) {
    snprintf(out, n, "null");
    return;
  }
  if (!emi) {
    snprintf(out, n, "dev");
    return;
  }
  for (int i = nallocs - 1; i >= 0; i--) {
    if (!allocs[i].live) continue;
    uintptr_t b = allocs[i].begin;
    if (p == b) {
      snprintf(out, n, "d%d", allocs[i].name);
      return;
    }
    if (p > b && p < b + allocs[i].size) {
      snprintf(out, n, "d%d+%lu", allocs[i].name, (unsigned long)(p - b));
      return;
    }
  }
  snprintf(out, n, "g%d", find_or_add(&globals, p));
}

// The initial device's number (the host in data operations), asked once the runtime runs
// (not from device_initialize, which runs while the runtime registers its devices).
static void know_initial_device(void) {
  if (initial_device >= 0) return;
  int (*f)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_initial_device");
  initial_device = f ? f() : -1;
}

static void name_addr(char *out, size_t n, uintptr_t p, int device) {
  know_initial_device();
  if (device == initial_device || device < 0)
    host_name(out, n, p);
  else
    name_dev(out, n, p);
}

static void name_ra(char *out, size_t n, const void *p) {
  if (!p) {
    snprintf(out, n, "null");
    return;
  }
  if (portable) {
    snprintf(out, n, "r%d", find_or_add(&ras, (uintptr_t)p));
    return;
  }
  Dl_info info;
  if (dladdr(p, &info) && info.dli_fname) {
    const char *b = strrchr(info.dli_fname, '/');
    snprintf(out, n, "%s+0x%lx", b ? b + 1 : info.dli_fname,
             (unsigned long)((const char *)p - (const char *)info.dli_fbase));
  } else {
    snprintf(out, n, "unknown");
  }
}

static void name_task(char *out, size_t n, ompt_data_t *p) {
  if (!p)
    snprintf(out, n, "null");
  else if (!p->value)
    snprintf(out, n, "unnamed");
  else
    snprintf(out, n, "t%lu", (unsigned long)p->value);
}

static void name_target_task(char *out, size_t n, ompt_data_t *p) {
  if (!p)
    snprintf(out, n, "null");
  else if (!p->value)
    snprintf(out, n, "unnamed");
  else
    snprintf(out, n, "tt%lu", (unsigned long)p->value);
}

static void name_id(char *out, size_t n, uint64_t id) {
  if (!id)
    snprintf(out, n, "none");
  else
    snprintf(out, n, "i%d", find_or_add(&ids, id));
}

static void name_dev_num(char *out, size_t n, int d) {
  know_initial_device();
  if (d == initial_device)
    snprintf(out, n, "host");
  else
    snprintf(out, n, "%d", d);
}

static const char *kind_name(ompt_target_t k) {
  switch (k) {
  case ompt_target: return "target";
  case ompt_target_enter_data: return "enter_data";
  case ompt_target_exit_data: return "exit_data";
  case ompt_target_update: return "update";
  case ompt_target_nowait: return "target_nowait";
  case ompt_target_enter_data_nowait: return "enter_data_nowait";
  case ompt_target_exit_data_nowait: return "exit_data_nowait";
  case ompt_target_update_nowait: return "update_nowait";
  }
  return "unknown";
}

static const char *op_name(ompt_target_data_op_t k) {
  switch (k) {
  case ompt_target_data_alloc: return "alloc";
  case ompt_target_data_transfer_to_device: return "to_device";
  case ompt_target_data_transfer_from_device: return "from_device";
  case ompt_target_data_delete: return "delete";
  case ompt_target_data_associate: return "associate";
  case ompt_target_data_disassociate: return "disassociate";
  default: return "other";
  }
}

static const char *ep_name(ompt_scope_endpoint_t e) {
  return e == ompt_scope_begin ? "begin" : e == ompt_scope_end ? "end" : "beginend";
}

#define OUT(...)                                                                          \
  do {                                                                                    \
    printf("ompt " __VA_ARGS__);                                                          \
    fflush(stdout);                                                                       \
  } while (0)

// ------------------------------------------------------------------ device callbacks
// Devices whose images are GPU binaries (type sm_*): their size depends on the CUDA toolchain
// that built them (the suite's ABI 7 and ABI 8 builds differ), so it is not printed.
static int gpu_device[64];

static void on_device_initialize(int dev, const char *type, ompt_device_t *device,
                                 ompt_function_lookup_t lookup, const char *doc) {
  (void)device;
  (void)lookup;
  if (dev >= 0 && dev < 64) gpu_device[dev] = type && strncmp(type, "sm_", 3) == 0;
  if (portable && dev != 0) return;
  pthread_mutex_lock(&mu);
  if (portable)
    OUT("device_initialize dev=%d doc=%s\n", dev, doc ? doc : "null");
  else
    OUT("device_initialize dev=%d type=%s doc=%s\n", dev, type ? type : "null",
        doc ? doc : "null");
  pthread_mutex_unlock(&mu);
}

static void on_device_finalize(int dev) {
  if (portable && dev != 0) return;
  OUT("device_finalize dev=%d\n", dev);
}

static int unload;

static void on_device_load(int dev, const char *file, int64_t offset, void *vma, size_t bytes,
                           void *host, void *devaddr, uint64_t module) {
  if (portable && dev != 0) return;
  pthread_mutex_lock(&mu);
  char h[64], m[32] = "";
  name_ra(h, sizeof h, host);
  if (unload) snprintf(m, sizeof m, " mod=m%d", find_or_add(&modules, module));
  char b[32] = "n";
  if (!portable) snprintf(b, sizeof b, "%zu", bytes);
  if (!portable && dev >= 0 && dev < 64 && gpu_device[dev]) snprintf(b, sizeof b, "cubin");
  OUT("device_load dev=%d file=%s offset=%ld vma=%s bytes=%s host=%s devaddr=%s%s\n", dev,
      file ? file : "null", (long)offset, vma ? "set" : "null", b, h, devaddr ? "set" : "null",
      m);
  pthread_mutex_unlock(&mu);
}

static void on_device_unload(int dev, uint64_t module) {
  if (portable && dev != 0) return;
  pthread_mutex_lock(&mu);
  OUT("device_unload dev=%d mod=m%d\n", dev, find_or_add(&modules, module));
  pthread_mutex_unlock(&mu);
}

// ------------------------------------------------------------------ target callbacks
static uint64_t next_region = 1, next_op = 1;
#define MAXR 1024
static struct {
  uint64_t id;
  pthread_t thread;
} open_regions[MAXR];

static void region_opened(uint64_t id) {
  for (int i = 0; i < MAXR; i++)
    if (!open_regions[i].id) {
      open_regions[i].id = id;
      open_regions[i].thread = pthread_self();
      return;
    }
}

static void region_check(uint64_t id, const char *what, int close) {
  for (int i = 0; i < MAXR; i++)
    if (open_regions[i].id == id) {
      if (!pthread_equal(open_regions[i].thread, pthread_self()))
        OUT("WRONG-THREAD %s of R%lu\n", what, (unsigned long)id);
      if (close) open_regions[i].id = 0;
      return;
    }
}

static void on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t ep, int dev,
                          ompt_data_t *task, ompt_data_t *target_task, ompt_data_t *target,
                          const void *code) {
  pthread_mutex_lock(&mu);
  char t[32], tt[32], r[64], d[16];
  if (ep == ompt_scope_begin) {
    target->value = next_region++;
    region_opened(target->value);
    if (target_task && !target_task->value) target_task->value = next_target_task++;
  } else {
    region_check(target->value, "target end", 1);
  }
  name_task(t, sizeof t, task);
  name_target_task(tt, sizeof tt, target_task);
  name_ra(r, sizeof r, code);
  name_dev_num(d, sizeof d, dev);
  OUT("target_emi %s kind=%s dev=%s task=%s target_task=%s target=R%lu ra=%s\n", ep_name(ep),
      kind_name(kind), d, t, tt, (unsigned long)target->value, r);
  pthread_mutex_unlock(&mu);
}

static void on_target(ompt_target_t kind, ompt_scope_endpoint_t ep, int dev, ompt_data_t *task,
                      ompt_id_t target_id, const void *code) {
  pthread_mutex_lock(&mu);
  char t[32], r[64], i[32], d[16];
  name_task(t, sizeof t, task);
  name_ra(r, sizeof r, code);
  name_id(i, sizeof i, target_id);
  name_dev_num(d, sizeof d, dev);
  OUT("target %s kind=%s dev=%s task=%s target_id=%s ra=%s\n", ep_name(ep), kind_name(kind), d,
      t, i, r);
  pthread_mutex_unlock(&mu);
}

static void data_op_line(const char *cb, const char *ep, const char *ids,
                         ompt_target_data_op_t k, void *src, int sd, void *dst, int dd,
                         size_t bytes, const void *code) {
  char s[64], ds[64], r[64], sdn[16], ddn[16];
  know_initial_device();
  host_range_seen(k, (uintptr_t)src, sd, initial_device, bytes);
  name_addr(s, sizeof s, (uintptr_t)src, sd);
  name_addr(ds, sizeof ds, (uintptr_t)dst, dd);
  name_ra(r, sizeof r, code);
  name_dev_num(sdn, sizeof sdn, sd);
  name_dev_num(ddn, sizeof ddn, dd);
  OUT("%s %s%s op=%s src=%s src_dev=%s dst=%s dst_dev=%s bytes=%zu ra=%s\n", cb, ep, ids,
      op_name(k), s, sdn, ds, ddn, bytes, r);
}

// An allocation's end event names the block (before it is printed); a delete's end event
// retires it (after).
static void track(ompt_target_data_op_t k, void *src, void *dst, size_t bytes) {
  (void)src;
  if (k == ompt_target_data_alloc && dst && nallocs < MAXN) {
    allocs[nallocs].begin = (uintptr_t)dst;
    allocs[nallocs].size = bytes;
    allocs[nallocs].name = ++alloc_names;
    allocs[nallocs].live = 1;
    nallocs++;
  }
}

static void forget(ompt_target_data_op_t k, void *src) {
  if (k == ompt_target_data_delete)
    for (int i = nallocs - 1; i >= 0; i--)
      if (allocs[i].live && allocs[i].begin == (uintptr_t)src) {
        allocs[i].live = 0;
        break;
      }
}

static void on_data_op_emi(ompt_scope_endpoint_t ep, ompt_data_t *target_task,
                           ompt_data_t *target, ompt_id_t *host_op_id,
                           ompt_target_data_op_t k, void *src, int sd, void *dst, int dd,
                           size_t bytes, const void *code) {
  pthread_mutex_lock(&mu);
  char ids[96], tt[32];
  if (ep == ompt_scope_begin) *host_op_id = next_op++;
  if (ep == ompt_scope_end) track(k, src, dst, bytes);
  name_target_task(tt, sizeof tt, target_task);
  if (!target)
    snprintf(ids, sizeof ids, " target=null target_task=%s host_op=O%lu", tt,
             (unsigned long)*host_op_id);
  else if (!target->value)
    snprintf(ids, sizeof ids, " target=none target_task=%s host_op=O%lu", tt,
             (unsigned long)*host_op_id);
  else {
    region_check(target->value, "data op", 0);
    snprintf(ids, sizeof ids, " target=R%lu target_task=%s host_op=O%lu",
             (unsigned long)target->value, tt, (unsigned long)*host_op_id);
  }
  data_op_line("data_op_emi", ep_name(ep), ids, k, src, sd, dst, dd, bytes, code);
  if (ep == ompt_scope_end) {
    forget(k, src);
    host_range_op_end(k, (uintptr_t)src, (uintptr_t)dst);
  }
  pthread_mutex_unlock(&mu);
}

static void on_data_op(ompt_id_t target_id, ompt_id_t host_op_id, ompt_target_data_op_t k,
                       void *src, int sd, void *dst, int dd, size_t bytes, const void *code) {
  pthread_mutex_lock(&mu);
  char ids[96], a[32], b[32];
  name_id(a, sizeof a, target_id);
  name_id(b, sizeof b, host_op_id);
  snprintf(ids, sizeof ids, " target_id=%s host_op_id=%s", a, b);
  // No end event without EMI: the address an allocation got is not known.
  data_op_line("data_op", "", ids, k, src, sd, dst, dd, bytes, code);
  pthread_mutex_unlock(&mu);
}

static void on_submit_emi(ompt_scope_endpoint_t ep, ompt_data_t *target, ompt_id_t *host_op_id,
                          unsigned teams) {
  pthread_mutex_lock(&mu);
  if (ep == ompt_scope_begin) *host_op_id = next_op++;
  region_check(target->value, "submit", 0);
  OUT("submit_emi %s target=R%lu host_op=O%lu teams=%u\n", ep_name(ep),
      (unsigned long)target->value, (unsigned long)*host_op_id, teams);
  pthread_mutex_unlock(&mu);
}

static void on_submit(ompt_id_t target_id, ompt_id_t host_op_id, unsigned teams) {
  pthread_mutex_lock(&mu);
  char a[32], b[32];
  name_id(a, sizeof a, target_id);
  name_id(b, sizeof b, host_op_id);
  OUT("submit target_id=%s host_op_id=%s teams=%u\n", a, b, teams);
  pthread_mutex_unlock(&mu);
}

// ------------------------------------------------------------------ task names
static void on_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t *parallel, ompt_data_t *task,
                             unsigned int n, unsigned int index, int flags) {
  (void)parallel;
  (void)n;
  (void)index;
  if (ep == ompt_scope_begin && (flags & ompt_task_initial)) {
    pthread_mutex_lock(&mu);
    task->value = next_task++;
    pthread_mutex_unlock(&mu);
  }
}

static void on_task_create(ompt_data_t *encountering, const ompt_frame_t *frame,
                           ompt_data_t *task, int flags, int has_deps, const void *code) {
  (void)encountering;
  (void)frame;
  (void)flags;
  (void)has_deps;
  (void)code;
  pthread_mutex_lock(&mu);
  task->value = next_task++;
  pthread_mutex_unlock(&mu);
}

// ------------------------------------------------------------------ start-up
static int env_on(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0");
}

static int tool_initialize(ompt_function_lookup_t lookup, int initial_device_num,
                           ompt_data_t *tool_data) {
  (void)tool_data;
  (void)initial_device_num;
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
  const char *mode = getenv("OMPT_TOOL_MODE");
  if (mode && !strcmp(mode, "noemi")) emi = 0, noemi = 1;
  if (mode && !strcmp(mode, "both")) noemi = 1;
  portable = env_on("OMPT_TOOL_PORTABLE");
  unload = env_on("OMPT_TOOL_UNLOAD");
  set(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task);
  set(ompt_callback_task_create, (ompt_callback_t)on_task_create);
  set(ompt_callback_device_initialize, (ompt_callback_t)on_device_initialize);
  set(ompt_callback_device_finalize, (ompt_callback_t)on_device_finalize);
  set(ompt_callback_device_load, (ompt_callback_t)on_device_load);
  if (unload) set(ompt_callback_device_unload, (ompt_callback_t)on_device_unload);
  if (emi) {
    set(ompt_callback_target_emi, (ompt_callback_t)on_target_emi);
    set(ompt_callback_target_data_op_emi, (ompt_callback_t)on_data_op_emi);
    set(ompt_callback_target_submit_emi, (ompt_callback_t)on_submit_emi);
  }
  if (noemi) {
    set(ompt_callback_target, (ompt_callback_t)on_target);
    set(ompt_callback_target_data_op, (ompt_callback_t)on_data_op);
    set(ompt_callback_target_submit, (ompt_callback_t)on_submit);
  }
  return 1;
}

static void tool_finalize(ompt_data_t *tool_data) {
  (void)tool_data;
  OUT("tool_finalize\n");
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
  (void)omp_version;
  (void)runtime_version;
  static ompt_start_tool_result_t result = {tool_initialize, tool_finalize, {0}};
  return &result;
}
