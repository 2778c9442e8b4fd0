// TOOL: ompt_fields_tool.c
// ENV: OMPT_FIELDS_PORTABLE=1
// LATE-COPIES: with copies back landing late the host device's nowait constructs complete at their task's poll, after their end event, and the host device (which frees at completion, not on the queue) reports their deletes there
// DIVERGENCE: LLVM 19 and 22 report target, enter data, exit data and update with nowait as ompt_target (1), ompt_target_enter_data (2), ompt_target_exit_data (3), ompt_target_update (4); OpenMP 5.2 (§13.8, §13.6, §13.7, §13.9 "Tool Callbacks") requires ompt_target_nowait (9), ompt_target_enter_data_nowait (10), ompt_target_exit_data_nowait (11), ompt_target_update_nowait (12) when the nowait clause is present, and the plain kinds otherwise (with depend too)
// The program of ompt_fields.c with each construct kind also run with nowait, and with nowait
// and depend: every argument of every target-related callback. Against LLVM the kinds of the
// eight nowait constructs differ and nothing else (docs/DIVERGENCES.md §6). The output does
// not depend on the device kind (OMPT_FIELDS_PORTABLE), so the GPU run is compared with it.
#define OMPT_FIELDS_NOWAIT 1
#include "ompt_fields.c"
