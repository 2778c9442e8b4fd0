// ENV: OMP_NUM_TEAMS=5 OMP_TEAMS_THREAD_LIMIT=64
// GPU-TIMEOUT-S: 300 (hundreds of launches, up to 2^31 - 1 teams, while other programs share the GPU)
// Launch geometry under OMP_NUM_TEAMS=5 OMP_TEAMS_THREAD_LIMIT=64, differential (OMP_NUM_TEAMS is a maximum on the device, for a num_teams clause too; OMP_TEAMS_THREAD_LIMIT caps the threads of a team; see launch_geometry.h).
#define GEOMETRY_CASES GEOMETRY_ENV_CASES
#include "launch_geometry.h"

int main(void) { return geometry_main(); }
