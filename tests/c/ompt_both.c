// GPU-UNCOMPARED: LLVM 19's bundled runtime sends the tool no target callbacks on the GPU
// TOOL: ompt_tool.c
// ENV: OMPT_TOOL_MODE=both
// A tool that registers the EMI callbacks and the non-EMI ones gets the EMI callbacks only
// (OpenMP 5.2 §19.5.2: the non-EMI form is not dispatched when its EMI form is registered),
// as under LLVM 19: the program of ompt_constructs.c.
#include "ompt_constructs.c"
