// An OMPT tool (OpenMP 5.2 §19) that prints every argument of every target-related callback
// (device_initialize/finalize/load/unload, target, target_emi, target_data_op(_emi),
// target_submit(_emi)) as a profiler receives it, with nothing normalised that both runtimes
// must agree on: construct kinds as their ompt_target_t value and name, module ids, the
// runtime's target and host-op ids (non-EMI) as numbers, the values the runtime passes in
// target_data and host_op_id before the tool writes them (EMI begin events), and what
// libomp's ompt_get_target_info and ompt_get_num_devices answer inside each callback.
// Only what differs between runs of one binary is replaced:
//   host addresses     h1, h2, ... per host range an allocation (or association) names (h2+16
//                      inside one); any other host address (the runtime's own buffers) hx:
//                      ompt_host_names.h
//   device addresses   d1, d2, ... per allocation seen (d3+16 inside one), else g1, g2, ...;
//                      without EMI end events (no allocated addresses) just "dev"
//   return addresses   FILE+0xOFFSET inside their module (the same binary in both runs)
//   tasks              the initial task is t1, explicit tasks t2, t3, ... (the tool names them
//                      through libomp's task callbacks)
// The tool writes its own values into target_data (1000 + n at each construct's begin),
// host_op_id (2000 + n at each data op's begin, 3000 + n at each submit's begin) and
// target_task_data (4000 + n when 0 at a construct's begin), so the output shows which
// words the runtime hands back in later callbacks. (What host_op_id holds before the tool
// writes it is not printed: LLVM leaves there whatever its thread's last operation had,
// which for nowait constructs depends on which hidden helper thread runs the task.)
//
// Environment:
//   OMPT_FIELDS_CALLBACKS  a comma-separated subset of target_emi, data_op_emi, submit_emi,
//                          target, data_op, submit (default: the three EMI callbacks); "all"
//   OMPT_FIELDS_UNLOAD=1   also register device_unload (LLVM's libomp answers ompt_set_never)
//   OMPT_FIELDS_PORTABLE=1 output that does not depend on the device kind, for comparing a
//                          GPU run with a host run: only device 0's life-cycle callbacks, no
//                          device type or image size, return addresses numbered r1, r2, ...
//                          in order of appearance, the initial device's number as "host"
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
static int initial_device = -2, portable;
static ompt_get_target_info_t get_target_info;
static ompt_get_num_devices_t get_num_devices;

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

static table_t globals, ras;
static uint64_t next_task = 1, next_target_task = 4001, next_region = 1001, next_op = 2001,
                next_submit = 3001;
static int have_data_op_emi;

static struct {
  uintptr_t begin;
  size_t size;
  int name, live;
} allocs[MAXN];
static int nallocs, alloc_names;

#define OUT(...)                                                                          \
  do {                                                                                    \
    printf("ompt " __VA_ARGS__);                                                          \
    fflush(stdout);                                                                       \
  } while (0)

// The initial device's number, asked once the runtime runs (not from device_initialize).
static void know_initial_device(void) {
  if (initial_device != -2) return;
  int (*f)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_initial_device");
  initial_device = f ? f() : -1;
}

static void name_addr(char *out, size_t n, uintptr_t p, int device) {
  know_initial_device();
  if (!p) {
    snprintf(out, n, "null");
    return;
  }
  if (device == initial_device || device < 0) {
    host_name(out, n, p);
    return;
  }
  if (!have_data_op_emi) {
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

static void name_ra(char *out, size_t n, const void *p) {
  Dl_info info;
  if (!p)
    snprintf(out, n, "null");
  else if (portable)
    snprintf(out, n, "r%d", find_or_add(&ras, (uintptr_t)p));
  else if (dladdr(p, &info) && info.dli_fname) {
    const char *b = strrchr(info.dli_fname, '/');
    snprintf(out, n, "%s+0x%lx", b ? b + 1 : info.dli_fname,
             (unsigned long)((const char *)p - (const char *)info.dli_fbase));
  } else
    snprintf(out, n, "unknown");
}

static void name_data(char *out, size_t n, const ompt_data_t *d) {
  if (!d)
    snprintf(out, n, "null");
  else
    snprintf(out, n, "%lu", (unsigned long)d->value);
}

static table_t tasks_seen;

// Tasks by creation order; portable output numbers them in order of first appearance in
// these callbacks instead (the runtime creates tasks of its own on some devices, such as the
// host device's deferred work, which shift the creation numbers of the program's tasks).
static void name_task(char *out, size_t n, const ompt_data_t *d) {
  if (!d)
    snprintf(out, n, "null");
  else if (!d->value)
    snprintf(out, n, "unnamed");
  else if (portable)
    snprintf(out, n, "t%d", find_or_add(&tasks_seen, (uintptr_t)d->value));
  else
    snprintf(out, n, "t%lu", (unsigned long)d->value);
}

static const char *kind_name(ompt_target_t k) {
  switch (k) {
  case ompt_target: return "ompt_target";
  case ompt_target_enter_data: return "ompt_target_enter_data";
  case ompt_target_exit_data: return "ompt_target_exit_data";
  case ompt_target_update: return "ompt_target_update";
  case ompt_target_nowait: return "ompt_target_nowait";
  case ompt_target_enter_data_nowait: return "ompt_target_enter_data_nowait";
  case ompt_target_exit_data_nowait: return "ompt_target_exit_data_nowait";
  case ompt_target_update_nowait: return "ompt_target_update_nowait";
  }
  return "unknown";
}

static const char *op_name(ompt_target_data_op_t k) {
  switch (k) {
  case ompt_target_data_alloc: return "alloc";
  case ompt_target_data_transfer_to_device: return "transfer_to_device";
  case ompt_target_data_transfer_from_device: return "transfer_from_device";
  case ompt_target_data_delete: return "delete";
  case ompt_target_data_associate: return "associate";
  case ompt_target_data_disassociate: return "disassociate";
  case ompt_target_data_alloc_async: return "alloc_async";
  case ompt_target_data_transfer_to_device_async: return "transfer_to_device_async";
  case ompt_target_data_transfer_from_device_async: return "transfer_from_device_async";
  case ompt_target_data_delete_async: return "delete_async";
  }
  return "unknown";
}

// A device number; the initial device (the host in data operations) as "host" when portable.
static void name_dev_num(char *out, size_t n, int d) {
  know_initial_device();
  if (portable && d == initial_device)
    snprintf(out, n, "host");
  else
    snprintf(out, n, "%d", d);
}

static const char *ep_name(ompt_scope_endpoint_t e) {
  return e == ompt_scope_begin ? "begin" : e == ompt_scope_end ? "end" : "beginend";
}

// What libomp's inquiry functions answer inside a callback.
static void inquire(char *out, size_t n) {
  uint64_t dev = 0;
  ompt_id_t target = 0, op = 0;
  int r = get_target_info ? get_target_info(&dev, &target, &op) : -1;
  if (r > 0)
    snprintf(out, n, " info=%d,dev=%lu,target_id=%lu,host_op_id=%lu", r, (unsigned long)dev,
             (unsigned long)target, (unsigned long)op);
  else
    snprintf(out, n, " info=%d", r);
}

// ------------------------------------------------------------------ device callbacks
static char cubin_device[64];

static void on_device_initialize(int dev, const char *type, ompt_device_t *device,
                                 ompt_function_lookup_t lookup, const char *doc) {
  if (portable && dev != 0) return;
  pthread_mutex_lock(&mu);
  if (type && !strncmp(type, "sm_", 3) && dev >= 0 && dev < 64) cubin_device[dev] = 1;
  OUT("device_initialize device_num=%d type=%s device=%s lookup=%s documentation=%s\n", dev,
      portable ? "-" : type ? type : "null", device ? "set" : "null", lookup ? "set" : "null",
      doc ? doc : "null");
  pthread_mutex_unlock(&mu);
}

static void on_device_finalize(int dev) {
  if (portable && dev != 0) return;
  pthread_mutex_lock(&mu);
  OUT("device_finalize device_num=%d\n", dev);
  pthread_mutex_unlock(&mu);
}

static void on_device_load(int dev, const char *file, int64_t offset, void *vma, size_t bytes,
                           void *host, void *devaddr, uint64_t module) {
  if (portable && dev != 0) return;
  pthread_mutex_lock(&mu);
  char h[96], b[32];
  // The image's place in the program (not a return address: not numbered as one).
  if (portable)
    snprintf(h, sizeof h, "%s", host ? "set" : "null");
  else
    name_ra(h, sizeof h, host);
  if (portable || (dev >= 0 && dev < 64 && cubin_device[dev]))
    snprintf(b, sizeof b, "-");  // a cubin's size depends on the CUDA toolchain that made it
  else
    snprintf(b, sizeof b, "%zu", bytes);
  OUT("device_load device_num=%d filename=%s offset_in_file=%ld vma_in_file=%s bytes=%s "
      "host_addr=%s device_addr=%s module_id=%lu\n",
      dev, file ? file : "null", (long)offset, vma ? "set" : "null", b, h,
      devaddr ? "set" : "null", (unsigned long)module);
  pthread_mutex_unlock(&mu);
}

static void on_device_unload(int dev, uint64_t module) {
  if (portable && dev != 0) return;
  pthread_mutex_lock(&mu);
  OUT("device_unload device_num=%d module_id=%lu\n", dev, (unsigned long)module);
  pthread_mutex_unlock(&mu);
}

// ------------------------------------------------------------------ target callbacks
static void on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t ep, int dev,
                          ompt_data_t *task, ompt_data_t *target_task, ompt_data_t *target,
                          const void *code) {
  pthread_mutex_lock(&mu);
  char t[32], tt_in[32], in[32], r[96], info[96];
  name_data(in, sizeof in, target);
  name_data(tt_in, sizeof tt_in, target_task);
  if (ep == ompt_scope_begin) {
    if (target) target->value = next_region++;
    if (target_task && !target_task->value) target_task->value = next_target_task++;
  }
  name_task(t, sizeof t, task);
  name_ra(r, sizeof r, code);
  inquire(info, sizeof info);
  OUT("target_emi endpoint=%s kind=%d(%s) device_num=%d task_data=%s target_task_data=%s "
      "target_data=%s->%lu codeptr_ra=%s%s\n",
      ep_name(ep), (int)kind, kind_name(kind), dev, t, tt_in, in,
      target ? (unsigned long)target->value : 0ul, r, info);
  pthread_mutex_unlock(&mu);
}

static void on_target(ompt_target_t kind, ompt_scope_endpoint_t ep, int dev, ompt_data_t *task,
                      ompt_id_t target_id, const void *code) {
  pthread_mutex_lock(&mu);
  char t[32], r[96], info[96];
  name_task(t, sizeof t, task);
  name_ra(r, sizeof r, code);
  inquire(info, sizeof info);
  OUT("target endpoint=%s kind=%d(%s) device_num=%d task_data=%s target_id=%lu "
      "codeptr_ra=%s%s\n",
      ep_name(ep), (int)kind, kind_name(kind), dev, t, (unsigned long)target_id, r, info);
  pthread_mutex_unlock(&mu);
}

static void data_op_fields(char *out, size_t n, ompt_target_data_op_t k, void *src, int sd,
                           void *dst, int dd, size_t bytes, const void *code) {
  char s[64], d[64], r[96], info[96], sdn[16], ddn[16];
  know_initial_device();
  host_range_seen(k, (uintptr_t)src, sd, initial_device, bytes);
  name_addr(s, sizeof s, (uintptr_t)src, sd);
  name_addr(d, sizeof d, (uintptr_t)dst, dd);
  name_dev_num(sdn, sizeof sdn, sd);
  name_dev_num(ddn, sizeof ddn, dd);
  name_ra(r, sizeof r, code);
  inquire(info, sizeof info);
  snprintf(out, n,
           "optype=%d(%s) src_addr=%s src_device_num=%s dest_addr=%s dest_device_num=%s "
           "bytes=%zu codeptr_ra=%s%s",
           (int)k, op_name(k), s, sdn, d, ddn, bytes, r, info);
}

static void on_data_op_emi(ompt_scope_endpoint_t ep, ompt_data_t *target_task,
                           ompt_data_t *target, ompt_id_t *host_op_id,
                           ompt_target_data_op_t k, void *src, int sd, void *dst, int dd,
                           size_t bytes, const void *code) {
  pthread_mutex_lock(&mu);
  char tt[32], tg[32], fields[512];
  if (ep == ompt_scope_begin && host_op_id) *host_op_id = next_op++;
  if (ep == ompt_scope_end && k == ompt_target_data_alloc && dst && nallocs < MAXN) {
    allocs[nallocs].begin = (uintptr_t)dst;
    allocs[nallocs].size = bytes;
    allocs[nallocs].name = ++alloc_names;
    allocs[nallocs].live = 1;
    nallocs++;
  }
  name_data(tt, sizeof tt, target_task);
  name_data(tg, sizeof tg, target);
  data_op_fields(fields, sizeof fields, k, src, sd, dst, dd, bytes, code);
  OUT("data_op_emi endpoint=%s target_task_data=%s target_data=%s host_op_id=%lu %s\n",
      ep_name(ep), tt, tg, host_op_id ? (unsigned long)*host_op_id : 0ul, fields);
  if (ep == ompt_scope_end && k == ompt_target_data_delete)
    for (int i = nallocs - 1; i >= 0; i--)
      if (allocs[i].live && allocs[i].begin == (uintptr_t)src) {
        allocs[i].live = 0;
        break;
      }
  if (ep == ompt_scope_end) host_range_op_end(k, (uintptr_t)src, (uintptr_t)dst);
  pthread_mutex_unlock(&mu);
}

static void on_data_op(ompt_id_t target_id, ompt_id_t host_op_id, ompt_target_data_op_t k,
                       void *src, int sd, void *dst, int dd, size_t bytes, const void *code) {
  pthread_mutex_lock(&mu);
  char fields[512];
  data_op_fields(fields, sizeof fields, k, src, sd, dst, dd, bytes, code);
  OUT("data_op target_id=%lu host_op_id=%lu %s\n", (unsigned long)target_id,
      (unsigned long)host_op_id, fields);
  pthread_mutex_unlock(&mu);
}

static void on_submit_emi(ompt_scope_endpoint_t ep, ompt_data_t *target, ompt_id_t *host_op_id,
                          unsigned teams) {
  pthread_mutex_lock(&mu);
  char tg[32], info[96];
  if (ep == ompt_scope_begin && host_op_id) *host_op_id = next_submit++;
  name_data(tg, sizeof tg, target);
  inquire(info, sizeof info);
  OUT("submit_emi endpoint=%s target_data=%s host_op_id=%lu requested_num_teams=%u%s\n",
      ep_name(ep), tg, host_op_id ? (unsigned long)*host_op_id : 0ul, teams, info);
  pthread_mutex_unlock(&mu);
}

static void on_submit(ompt_id_t target_id, ompt_id_t host_op_id, unsigned teams) {
  pthread_mutex_lock(&mu);
  char info[96];
  inquire(info, sizeof info);
  OUT("submit target_id=%lu host_op_id=%lu requested_num_teams=%u%s\n",
      (unsigned long)target_id, (unsigned long)host_op_id, teams, info);
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
static int wanted(const char *list, const char *name) {
  if (!strcmp(list, "all")) return 1;
  size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)); p += n)
    if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return 1;
  return 0;
}

static int tool_initialize(ompt_function_lookup_t lookup, int initial_device_num,
                           ompt_data_t *tool_data) {
  (void)tool_data;
  (void)initial_device_num;
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
  get_target_info = (ompt_get_target_info_t)lookup("ompt_get_target_info");
  get_num_devices = (ompt_get_num_devices_t)lookup("ompt_get_num_devices");
  const char *list = getenv("OMPT_FIELDS_CALLBACKS"), *p = getenv("OMPT_FIELDS_PORTABLE");
  portable = p && *p && strcmp(p, "0");
  if (!list || !*list) list = "target_emi,data_op_emi,submit_emi";
  set(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task);
  set(ompt_callback_task_create, (ompt_callback_t)on_task_create);
  // What libomp answers for each registration (ompt_set_result_t) is printed.
#define SET(name, code, fn)                                                                  \
  OUT("set_callback %s=%d\n", name, (int)set(code, (ompt_callback_t)fn))
  SET("device_initialize", ompt_callback_device_initialize, on_device_initialize);
  SET("device_finalize", ompt_callback_device_finalize, on_device_finalize);
  SET("device_load", ompt_callback_device_load, on_device_load);
  if (getenv("OMPT_FIELDS_UNLOAD")) SET("device_unload", ompt_callback_device_unload, on_device_unload);
  if (wanted(list, "target_emi")) SET("target_emi", ompt_callback_target_emi, on_target_emi);
  if (wanted(list, "data_op_emi")) {
    have_data_op_emi = 1;
    SET("target_data_op_emi", ompt_callback_target_data_op_emi, on_data_op_emi);
  }
  if (wanted(list, "submit_emi"))
    SET("target_submit_emi", ompt_callback_target_submit_emi, on_submit_emi);
  if (wanted(list, "target")) SET("target", ompt_callback_target, on_target);
  if (wanted(list, "data_op")) SET("target_data_op", ompt_callback_target_data_op, on_data_op);
  if (wanted(list, "submit")) SET("target_submit", ompt_callback_target_submit, on_submit);
#undef SET
  return 1;
}

static void tool_finalize(ompt_data_t *tool_data) {
  (void)tool_data;
  OUT("tool_finalize num_devices=%d\n", get_num_devices ? get_num_devices() : -1);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
  (void)omp_version;
  (void)runtime_version;
  static ompt_start_tool_result_t result = {tool_initialize, tool_finalize, {0}};
  return &result;
}
