// ENV: OMP_NUM_TEAMS=70000
// GPU-TIMEOUT-S: 300 (hundreds of launches, up to 2^31 - 1 teams, while other programs share the GPU)
// Launch geometry under OMP_NUM_TEAMS=70000, differential (a maximum above the old 65,536 cap; the trip-count rule still starts from 3200 teams; see launch_geometry.h).
#define GEOMETRY_CASES GEOMETRY_ENV_CASES
#include "launch_geometry.h"

int main(void) { return geometry_main(); }
