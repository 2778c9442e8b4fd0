// Names of host addresses for the OMPT test tools (ompt_tool.c, ompt_fields_tool.c), stable
// from run to run and from runtime to runtime: an address inside a host range the program
// mapped (as an allocation or association names it) is named after that range, h1, h2, ... in
// order of first appearance (h2+16 inside one); any other host address is the runtime's own
// (an attached pointer's value, packed first-private arrays) or memory never mapped, and is hx:
// its number would depend on where the runtime's buffers happen to lie. A range whose device
// block an EMI delete event frees names nothing after it (a later buffer of the runtime's own at
// the same place is hx too); the range keeps its number for when it is mapped again.
#include <omp-tools.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HOST_RANGES 4096
static struct {
  uintptr_t begin;
  size_t size;
  int number;
  uintptr_t device; // the block its allocation's end event gave it, 0 before that
  int live;
} host_ranges[HOST_RANGES];
static int n_host_ranges, host_numbers;

// Records the host range that data operation `k` names, if it is an allocation or an
// association from the host (`initial_device`: the host's device number, or -1 unknown).
static void host_range_seen(ompt_target_data_op_t k, uintptr_t src, int src_device,
                            int initial_device, size_t bytes) {
  if (k != ompt_target_data_alloc && k != ompt_target_data_associate) return;
  if (!(src_device == initial_device || src_device < 0) || !src) return;
  int number = 0;
  for (int i = n_host_ranges - 1; i >= 0 && !number; i--) {
    if (host_ranges[i].begin != src) continue;
    // Seen already by this operation (its begin event, or the other callback of a tool that
    // registers both): one range, which the end event places.
    if (host_ranges[i].live && !host_ranges[i].device) return;
    number = host_ranges[i].number;
  }
  if (n_host_ranges == HOST_RANGES) return;
  host_ranges[n_host_ranges].begin = src;
  host_ranges[n_host_ranges].size = bytes;
  host_ranges[n_host_ranges].number = number ? number : ++host_numbers;
  host_ranges[n_host_ranges].device = 0;
  host_ranges[n_host_ranges].live = 1;
  n_host_ranges++;
}

// At the end event of an EMI data operation: an allocation places the latest range begun at
// `src` at device address `dst`; a delete (`src`: a device address) ends the range placed there.
static void host_range_op_end(ompt_target_data_op_t k, uintptr_t src, uintptr_t dst) {
  for (int i = n_host_ranges - 1; i >= 0; i--) {
    if (!host_ranges[i].live) continue;
    if (k == ompt_target_data_alloc && dst && host_ranges[i].begin == src &&
        !host_ranges[i].device) {
      host_ranges[i].device = dst;
      return;
    }
    if (k == ompt_target_data_delete && src && host_ranges[i].device == src) {
      host_ranges[i].live = 0;
      return;
    }
  }
}

static void host_name(char *out, size_t n, uintptr_t p) {
  if (!p) {
    snprintf(out, n, "null");
    return;
  }
  for (int i = n_host_ranges - 1; i >= 0; i--) {
    if (!host_ranges[i].live) continue;
    uintptr_t b = host_ranges[i].begin;
    if (p == b || (p > b && p < b + host_ranges[i].size)) {
      if (p == b)
        snprintf(out, n, "h%d", host_ranges[i].number);
      else
        snprintf(out, n, "h%d+%lu", host_ranges[i].number, (unsigned long)(p - b));
      return;
    }
  }
  snprintf(out, n, "hx");
}
