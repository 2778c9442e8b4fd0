// GPU-UNCOMPARED: LLVM 19's bundled runtime sends the tool no target callbacks on the GPU
// TOOL: ompt_fields_tool.c
// ENV: OMPT_FIELDS_CALLBACKS=target_emi,data_op,submit
// The program of ompt_fields.c with the EMI target callback and the non-EMI data-op and
// submit callbacks, as LLVM 19 and 22 report them: a data op's or submit's target_id is the
// value the tool stored in target_data at the construct's begin (0 outside constructs), and
// host_op_id comes from one counter, starting at 1, shared by data operations and
// submissions and drawn only for the non-EMI callbacks dispatched.
#include "ompt_fields.c"
