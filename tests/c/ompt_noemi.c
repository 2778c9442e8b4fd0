// GPU-UNCOMPARED: LLVM 19's bundled runtime sends the tool no target callbacks on the GPU
// TOOL: ompt_tool.c
// ENV: OMPT_TOOL_MODE=noemi
// The non-EMI callbacks (ompt_callback_target, _target_data_op, _target_submit), compared
// with LLVM 19's: target ids and host-op ids come from the runtime (one counter, as in
// LLVM), data operations have no end event. The program of ompt_api.c (no `target enter
// data`, whose non-EMI target id LLVM 19 leaves 0: see ompt_noemi_enter_data.c).
#include "ompt_api.c"
