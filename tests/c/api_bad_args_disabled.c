// HOST-ONLY: a forked child per case, and a child cannot use the CUDA context its parent initialised
// ENV: OMP_TARGET_OFFLOAD=DISABLED
// DIVERGENCE(clang19): LLVM 19 still counts its plugins' devices when offloading is disabled (docs/DIVERGENCES.md 10); OpenMP 5.2 §21.2.8: as if the host were the only device, as LLVM 22 does (its clang-22 run is compared case by case)
// STDERR
// api_bad_args.h under OMP_TARGET_OFFLOAD=DISABLED.
#include "api_bad_args.h"
