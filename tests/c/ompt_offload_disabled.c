// TOOL: ompt_tool.c
// ENV: OMP_TARGET_OFFLOAD=DISABLED
// Offloading disabled: the devices are still initialised for the tool (as LLVM 19 does at
// registration), every construct runs on the host and reports nothing; the program of
// ompt_api.c, whose device memory routines still report their operations.
#include "ompt_api.c"
