// GPU-UNCOMPARED: LLVM 19's bundled runtime sends the tool no target callbacks on the GPU
// TOOL: ompt_fields_tool.c
// ENV: OMPT_FIELDS_CALLBACKS=all
// The program of ompt_fields.c with every target callback registered in both forms: only the
// EMI forms are dispatched, with what they carry when registered alone, as LLVM 19 and 22 do.
#include "ompt_fields.c"
