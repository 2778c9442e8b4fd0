// An OMPT device-tracing tool (OpenMP 5.2 §19.6.2) for the programs that name it in a
// `// TOOL:` directive. LLVM 19 offers no tracing: its lookup finds none of the entry points,
// and this tool says so. Under our runtime it traces device 0 and checks every record against
// what the EMI callbacks saw of the same operation (the mistakes other implementations made):
//   - the device number of the buffer callbacks is the traced device's;
//   - host_op_id is the one the tool set in the operation's EMI callback, target_id the one it
//     set for the operation's construct, thread_id the OS id of the thread that issued it;
//   - end_time >= time, and both translate (ompt_translate_time) into the interval between
//     starting the trace and the record's delivery, on omp_get_wtime's clock;
//   - records of one thread come in the order their operations started;
//   - each record's fields (kind, bytes, device numbers) are the operation's.
// It prints what it saw as counts, so the output does not depend on the device kind.
//
// The program steers it with omp_control_tool: omp_control_tool_flush (ompt_flush_trace),
// omp_control_tool_pause / _start (ompt_pause_trace), omp_control_tool_end (ompt_stop_trace),
// and command 64: print the records delivered so far.
//
// Environment:
//   OMPT_TRACE_BUFFER=N   bytes of each buffer the tool hands out (default 4096)
//   OMPT_TRACE_ZERO=K     the first K buffer requests get a 0-byte buffer (a tool with no room)
//   OMPT_TRACE_KERNEL=1   also print the longest kernel record's duration against the longest
//                         wall time the program reported through omp_control_tool(65, us, 0)
#define _GNU_SOURCE
#include <omp-tools.h>
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static ompt_device_t *traced;
static ompt_set_trace_ompt_t set_trace_ompt;
static ompt_start_trace_t start_trace;
static ompt_pause_trace_t pause_trace;
static ompt_flush_trace_t flush_trace;
static ompt_stop_trace_t stop_trace;
static ompt_advance_buffer_cursor_t advance_cursor;
static ompt_get_record_type_t get_record_type;
static ompt_get_record_ompt_t get_record_ompt;
static ompt_get_device_time_t get_device_time;
static ompt_translate_time_t translate_time;
static double trace_started;
static size_t buffer_bytes = 4096;
static int zero_buffers;

#define OUT(...)                                                                          \
  do {                                                                                    \
    printf("trace " __VA_ARGS__);                                                         \
    fflush(stdout);                                                                       \
  } while (0)

// ------------------------------------------------------------------ what the callbacks saw
#define MAXOPS 65536
static struct {
  uint64_t host_op, target;
  pid_t tid;
  int kind; // data op kind, or 100 for a kernel
  size_t bytes;
  int src_dev, dst_dev;
} ops[MAXOPS];
static int nops;
static uint64_t next_id = 1;

static pid_t tid(void) { return (pid_t)gettid(); }

static void on_target(ompt_target_t kind, ompt_scope_endpoint_t ep, int dev, ompt_data_t *task,
                      ompt_data_t *target_task, ompt_data_t *target, const void *code) {
  (void)kind, (void)dev, (void)task, (void)target_task, (void)code;
  if (ep != ompt_scope_begin) return;
  pthread_mutex_lock(&mu);
  target->value = next_id++;
  pthread_mutex_unlock(&mu);
}

static void remember(uint64_t op, uint64_t target, int kind, size_t bytes, int sd, int dd) {
  if (nops == MAXOPS) return;
  ops[nops].host_op = op;
  ops[nops].target = target;
  ops[nops].tid = tid();
  ops[nops].kind = kind;
  ops[nops].bytes = bytes;
  ops[nops].src_dev = sd;
  ops[nops].dst_dev = dd;
  nops++;
}

static void on_data_op(ompt_scope_endpoint_t ep, ompt_data_t *target_task, ompt_data_t *target,
                       ompt_id_t *host_op_id, ompt_target_data_op_t k, void *src, int sd,
                       void *dst, int dd, size_t bytes, const void *code) {
  (void)target_task, (void)src, (void)dst, (void)code;
  if (ep != ompt_scope_begin) return;
  pthread_mutex_lock(&mu);
  *host_op_id = next_id++;
  remember(*host_op_id, target ? target->value : 0, k, bytes, sd, dd);
  pthread_mutex_unlock(&mu);
}

static void on_submit(ompt_scope_endpoint_t ep, ompt_data_t *target, ompt_id_t *host_op_id,
                      unsigned teams) {
  (void)teams;
  if (ep != ompt_scope_begin) return;
  pthread_mutex_lock(&mu);
  *host_op_id = next_id++;
  remember(*host_op_id, target->value, 100, 0, 0, 0);
  pthread_mutex_unlock(&mu);
}

// ------------------------------------------------------------------ records
static long records, data_records, kernel_records, bad, buffers, empty_buffers, requests;
static long wrong_device_callbacks, unordered, zero_given;
static long long transferred;
static uint64_t longest_kernel_ns;
static double longest_wall_us;
#define MAXT 64
static struct {
  uint64_t thread, last_start;
} threads[MAXT];

static void check_order(uint64_t thread, uint64_t start) {
  for (int i = 0; i < MAXT; i++) {
    if (threads[i].thread == thread || !threads[i].thread) {
      threads[i].thread = thread;
      if (start < threads[i].last_start) unordered++;
      threads[i].last_start = start;
      return;
    }
  }
}

static const char *why_bad;

static void check(ompt_record_ompt_t *r, double now) {
  int found = -1;
  uint64_t op = r->type == ompt_callback_target_data_op ? r->record.target_data_op.host_op_id
                                                        : r->record.target_kernel.host_op_id;
  for (int i = nops - 1; i >= 0; i--)
    if (ops[i].host_op == op) {
      found = i;
      break;
    }
  uint64_t end = r->type == ompt_callback_target_data_op ? r->record.target_data_op.end_time
                                                         : r->record.target_kernel.end_time;
  double t0 = translate_time(traced, r->time), t1 = translate_time(traced, end);
  const char *why = NULL;
  if (found < 0)
    why = "host_op_id of no EMI callback";
  else if (ops[found].target != r->target_id)
    why = "target_id differs from the construct's";
  else if ((uint64_t)ops[found].tid != r->thread_id)
    why = "thread_id is not the issuing thread's";
  else if (end < r->time)
    why = "end before start";
  else if (t0 < trace_started - 0.05 || t1 > now + 0.05)
    why = "times outside the trace";
  else if (r->type == ompt_callback_target_data_op &&
           ((int)r->record.target_data_op.optype != ops[found].kind ||
            r->record.target_data_op.bytes != ops[found].bytes ||
            r->record.target_data_op.src_device_num != ops[found].src_dev ||
            r->record.target_data_op.dest_device_num != ops[found].dst_dev))
    why = "fields differ from the callback's";
  else if (r->type == ompt_callback_target_submit &&
           (ops[found].kind != 100 || r->record.target_kernel.granted_num_teams == 0))
    why = "kernel record of no submission";
  if (why) {
    bad++;
    if (!why_bad) why_bad = why;
  }
  check_order(r->thread_id, r->time);
  if (getenv("OMPT_TRACE_DUMP"))  // each record on stderr, for finding an unordered one
    fprintf(stderr, "record type=%d optype=%d thread=%lu host_op=%lu start=%lu end=%lu bytes=%lu\n",
            (int)r->type,
            r->type == ompt_callback_target_data_op ? (int)r->record.target_data_op.optype : -1,
            (unsigned long)r->thread_id, (unsigned long)op, (unsigned long)r->time,
            (unsigned long)end,
            r->type == ompt_callback_target_data_op ? (unsigned long)r->record.target_data_op.bytes
                                                    : 0ul);
  if (r->type == ompt_callback_target_submit && end - r->time > longest_kernel_ns)
    longest_kernel_ns = end - r->time;
}

static void on_buffer_request(int dev, ompt_buffer_t **buffer, size_t *bytes) {
  pthread_mutex_lock(&mu);
  requests++;
  if (dev != 0) wrong_device_callbacks++;
  if (zero_given < zero_buffers) {
    zero_given++;
    *buffer = NULL;
    *bytes = 0;
  } else {
    *buffer = malloc(buffer_bytes);
    *bytes = buffer_bytes;
  }
  pthread_mutex_unlock(&mu);
}

static void on_buffer_complete(int dev, ompt_buffer_t *buffer, size_t bytes,
                               ompt_buffer_cursor_t begin, int owned) {
  pthread_mutex_lock(&mu);
  if (dev != 0) wrong_device_callbacks++;
  buffers++;
  if (bytes == 0) empty_buffers++;
  double now = omp_get_wtime();
  ompt_buffer_cursor_t c = begin;
  if (bytes > 0) {
    do {
      if (get_record_type(buffer, c) != ompt_record_ompt) {
        bad++;
        break;
      }
      ompt_record_ompt_t *r = get_record_ompt(buffer, c);
      records++;
      if (r->type == ompt_callback_target_data_op) {
        data_records++;
        if (r->record.target_data_op.optype == ompt_target_data_transfer_to_device ||
            r->record.target_data_op.optype == ompt_target_data_transfer_from_device)
          transferred += r->record.target_data_op.bytes;
      } else if (r->type == ompt_callback_target_submit) {
        kernel_records++;
      } else {
        bad++;
      }
      check(r, now);
    } while (advance_cursor(traced, buffer, bytes, c, &c));
  }
  if (owned) free(buffer);
  pthread_mutex_unlock(&mu);
}

static void report(const char *when) {
  pthread_mutex_lock(&mu);
  OUT("%s: records=%ld data_ops=%ld kernels=%ld transferred=%lld bad=%ld%s%s unordered=%ld "
      "wrong_device=%ld\n",
      when, records, data_records, kernel_records, transferred, bad, why_bad ? " first: " : "",
      why_bad ? why_bad : "", unordered, wrong_device_callbacks);
  pthread_mutex_unlock(&mu);
}

// ------------------------------------------------------------------ control
static int on_control(uint64_t command, uint64_t modifier, void *arg, const void *code) {
  (void)arg, (void)code;
  if (!traced) return -1;
  int r = -1;
  switch (command) {
  case omp_control_tool_flush: r = flush_trace(traced); OUT("flush -> %d\n", r); break;
  case omp_control_tool_pause: r = pause_trace(traced, 1); OUT("pause -> %d\n", r); break;
  case omp_control_tool_start: r = pause_trace(traced, 0); OUT("resume -> %d\n", r); break;
  case omp_control_tool_end: r = stop_trace(traced); OUT("stop -> %d\n", r); break;
  case 64: report("so far"); r = 0; break;
  case 65:
    pthread_mutex_lock(&mu);
    if ((double)modifier > longest_wall_us) longest_wall_us = (double)modifier;
    pthread_mutex_unlock(&mu);
    r = 0;
    break;
  }
  return r;
}

// ------------------------------------------------------------------ devices
#define FIND(name) name = (ompt_##name##_t)lookup("ompt_" #name)

static void on_device_initialize(int dev, const char *type, ompt_device_t *device,
                                 ompt_function_lookup_t lookup, const char *doc) {
  (void)type, (void)doc;
  if (dev != 0) return;
  ompt_set_trace_ompt_t set_trace = (ompt_set_trace_ompt_t)lookup("ompt_set_trace_ompt");
  FIND(start_trace);
  FIND(pause_trace);
  FIND(flush_trace);
  FIND(stop_trace);
  advance_cursor = (ompt_advance_buffer_cursor_t)lookup("ompt_advance_buffer_cursor");
  FIND(get_record_type);
  FIND(get_record_ompt);
  FIND(get_device_time);
  FIND(translate_time);
  if (!set_trace || !start_trace || !pause_trace || !flush_trace || !stop_trace ||
      !advance_cursor || !get_record_type || !get_record_ompt || !get_device_time ||
      !translate_time) {
    OUT("device 0: no device tracing\n");
    return;
  }
  set_trace_ompt = set_trace;
  OUT("set_trace_ompt(data_op)=%d set_trace_ompt(submit)=%d set_trace_ompt(target)=%d\n",
      set_trace_ompt(device, 1, ompt_callback_target_data_op),
      set_trace_ompt(device, 1, ompt_callback_target_submit_emi),
      set_trace_ompt(device, 1, ompt_callback_target));
  double t = translate_time(device, get_device_time(device)), w = omp_get_wtime();
  OUT("device clock on omp_get_wtime's: %s\n", t > w - 0.05 && t < w + 0.05 ? "yes" : "no");
  traced = device;
  trace_started = omp_get_wtime();
  OUT("start_trace -> %d\n", start_trace(device, on_buffer_request, on_buffer_complete));
}

static void on_device_finalize(int dev) {
  if (dev != 0 || !traced) return;
  // Buffers still open were completed before this callback.
  report("at device finalize");
  if (getenv("OMPT_TRACE_KERNEL"))
    OUT("longest kernel record within [0.5, 1.05] of its region's wall time: %s\n",
        longest_wall_us > 0 && longest_kernel_ns / 1e3 >= 0.5 * longest_wall_us &&
                longest_kernel_ns / 1e3 <= 1.05 * longest_wall_us
            ? "yes"
            : "no");
  OUT("buffer requests answered with no room: %ld\n", zero_given);
}

static int tool_initialize(ompt_function_lookup_t lookup, int initial_device_num,
                           ompt_data_t *tool_data) {
  (void)initial_device_num, (void)tool_data;
  const char *b = getenv("OMPT_TRACE_BUFFER");
  if (b) buffer_bytes = strtoul(b, NULL, 10);
  const char *z = getenv("OMPT_TRACE_ZERO");
  if (z) zero_buffers = atoi(z);
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
  set(ompt_callback_device_initialize, (ompt_callback_t)on_device_initialize);
  set(ompt_callback_device_finalize, (ompt_callback_t)on_device_finalize);
  set(ompt_callback_target_emi, (ompt_callback_t)on_target);
  set(ompt_callback_target_data_op_emi, (ompt_callback_t)on_data_op);
  set(ompt_callback_target_submit_emi, (ompt_callback_t)on_submit);
  set(ompt_callback_control_tool, (ompt_callback_t)on_control);
  return 1;
}

static void tool_finalize(ompt_data_t *tool_data) { (void)tool_data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
  (void)omp_version, (void)runtime_version;
  static ompt_start_tool_result_t result = {tool_initialize, tool_finalize, {0}};
  return &result;
}
