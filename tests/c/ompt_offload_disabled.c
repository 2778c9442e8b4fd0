// GPU-UNCOMPARED: LLVM 19's bundled runtime sends the tool no device callbacks on the GPU, so it prints what the specification asks by accident
// TOOL: ompt_tool.c
// ENV: OMP_TARGET_OFFLOAD=DISABLED
// DIVERGENCE(clang19): with OMP_TARGET_OFFLOAD=DISABLED the only device is the host (OpenMP 5.2 §21.2.8): no device is initialised for the tool and the device memory routines have no device to report operations on (as LLVM 22); LLVM 19 still initialises its 4 host-plugin devices (DIVERGENCES.md 10)
// Offloading disabled: every construct runs on the host and reports nothing; the program of
// ompt_api.c. (LLVM 19 initialises its devices anyway and reports the device memory routines'
// operations on them.)
#include "ompt_api.c"
