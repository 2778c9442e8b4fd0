// ENV: OMP_TEAM_LIMIT=7 OMP_TEAMS_THREAD_LIMIT=1000
// GPU-TIMEOUT-S: 300 (hundreds of launches, up to 2^31 - 1 teams, while other programs share the GPU)
// Launch geometry under OMP_TEAM_LIMIT=7 OMP_TEAMS_THREAD_LIMIT=1000, differential (LLVM 19's plugin reads OMP_TEAM_LIMIT and applies it nowhere; see launch_geometry.h).
#define GEOMETRY_CASES GEOMETRY_ENV_CASES
#include "launch_geometry.h"

int main(void) { return geometry_main(); }
