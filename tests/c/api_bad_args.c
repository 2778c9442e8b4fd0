// HOST-ONLY: a forked child per case, and a child cannot use the CUDA context its parent initialised
// STDERR
// Device memory routines and constructs with every kind of device number, under the default
// offload policy, case by case against LLVM's runtime (api_bad_args.h).
#include "api_bad_args.h"
