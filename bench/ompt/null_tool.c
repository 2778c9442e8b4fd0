// An OMPT tool that costs as little as a tool can, to measure what the runtime's OMPT support
// costs with a tool attached: it registers the device and target EMI callbacks (each sets the
// id the specification asks of it and returns) and, with NULL_TOOL_TRACE=1, traces device 0
// (every record type, 1 MiB buffers whose records it counts).
//   clang-19 -shared -fPIC -O2 bench/ompt/null_tool.c -o libnull_tool.so
//   OMP_TOOL_LIBRARIES=$PWD/libnull_tool.so [NULL_TOOL_TRACE=1] ./host_regions all 7 20000
#include <omp-tools.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t next_id = 1;
static long records;
static ompt_advance_buffer_cursor_t advance;

static void on_target(ompt_target_t k, ompt_scope_endpoint_t ep, int d, ompt_data_t *t,
                      ompt_data_t *tt, ompt_data_t *target, const void *ra) {
  (void)k, (void)d, (void)t, (void)tt, (void)ra;
  if (ep == ompt_scope_begin) target->value = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
}

static void on_data_op(ompt_scope_endpoint_t ep, ompt_data_t *tt, ompt_data_t *target,
                       ompt_id_t *op, ompt_target_data_op_t k, void *s, int sd, void *dst, int dd,
                       size_t bytes, const void *ra) {
  (void)tt, (void)target, (void)k, (void)s, (void)sd, (void)dst, (void)dd, (void)bytes, (void)ra;
  if (ep == ompt_scope_begin) *op = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
}

static void on_submit(ompt_scope_endpoint_t ep, ompt_data_t *target, ompt_id_t *op, unsigned n) {
  (void)target, (void)n;
  if (ep == ompt_scope_begin) *op = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
}

static void on_request(int dev, ompt_buffer_t **buffer, size_t *bytes) {
  (void)dev;
  *bytes = 1 << 20;
  *buffer = malloc(*bytes);
}

static void on_complete(int dev, ompt_buffer_t *buffer, size_t bytes, ompt_buffer_cursor_t begin,
                        int owned) {
  (void)dev;
  ompt_buffer_cursor_t c = begin;
  if (bytes > 0)
    do records++;
    while (advance(NULL, buffer, bytes, c, &c));
  if (owned) free(buffer);
}

static void on_device_initialize(int dev, const char *type, ompt_device_t *device,
                                 ompt_function_lookup_t lookup, const char *doc) {
  (void)type, (void)doc;
  const char *trace = getenv("NULL_TOOL_TRACE");
  if (dev != 0 || !trace || trace[0] != '1') return;
  ompt_set_trace_ompt_t set = (ompt_set_trace_ompt_t)lookup("ompt_set_trace_ompt");
  ompt_start_trace_t start = (ompt_start_trace_t)lookup("ompt_start_trace");
  advance = (ompt_advance_buffer_cursor_t)lookup("ompt_advance_buffer_cursor");
  if (!set || !start || !advance) {
    fprintf(stderr, "null_tool: no device tracing\n");
    return;
  }
  set(device, 1, 0);
  start(device, on_request, on_complete);
}

static void on_device_finalize(int dev) {
  if (dev == 0 && records) fprintf(stderr, "null_tool: %ld records\n", records);
}

static int init(ompt_function_lookup_t lookup, int initial_device, ompt_data_t *data) {
  (void)initial_device, (void)data;
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
  set(ompt_callback_device_initialize, (ompt_callback_t)on_device_initialize);
  set(ompt_callback_device_finalize, (ompt_callback_t)on_device_finalize);
  set(ompt_callback_target_emi, (ompt_callback_t)on_target);
  set(ompt_callback_target_data_op_emi, (ompt_callback_t)on_data_op);
  set(ompt_callback_target_submit_emi, (ompt_callback_t)on_submit);
  return 1;
}

static void fini(ompt_data_t *data) { (void)data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned version, const char *runtime) {
  (void)version, (void)runtime;
  static ompt_start_tool_result_t result = {init, fini, {0}};
  return &result;
}
