// TOOL: ompt_fields_tool.c
// ENV: OMPT_FIELDS_CALLBACKS=target,data_op,submit OMPT_FIELDS_PORTABLE=1
// DIVERGENCE: LLVM 19 and 22 give target enter data (and the entry of target data) target_id 0 (ompt_id_none) in the non-EMI callbacks, so the ids of everything after the first enter data are one lower per enter data than ours; OpenMP 5.2 §19.5.2.26 asks for a unique identifier of the region (docs/DIVERGENCES.md §5)
// The program of ompt_fields.c with the non-EMI callbacks only: the runtime's target_id and
// host_op_id as numbers, from one counter starting at 1 (regions, data operations and
// submissions in the order they begin), as LLVM numbers them apart from enter data. The
// output does not depend on the device kind (OMPT_FIELDS_PORTABLE), so the GPU run is
// compared with it.
#include "ompt_fields.c"
