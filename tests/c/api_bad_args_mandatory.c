// HOST-ONLY: a forked child per case, and a child cannot use the CUDA context its parent initialised
// ENV: OMP_TARGET_OFFLOAD=MANDATORY
// STDERR
// api_bad_args.h under OMP_TARGET_OFFLOAD=MANDATORY.
#include "api_bad_args.h"
