// ENV: OMP_NUM_TEAMS=70000
// GPU-TIMEOUT-S: 300 (hundreds of launches, up to 2^31 - 1 teams, while other programs share the GPU)
// Launch geometry under OMP_NUM_TEAMS=70000, differential (a maximum above the old 65,536 cap; the trip-count rule still starts from 3200 teams; see launch_geometry.h).
#define GEOMETRY_CASES                                                                         \
  run_teams("generic", tp_nt_tl, tp_nt, tp_tl, tp_none, teams, nteams, tls, ntls, nths, 2);    \
  run_teams("gen-spmd", gs_any_nt_tl, gs_any_nt, gs_any_tl, gs_any_none, teams, nteams, tls,  \
            ntls, nths, 2);                                                                    \
  run_loops("spmd", spmd_nt_tl, spmd_nt, spmd_tl, spmd_none, teams, nteams, tls, ntls, trips, \
            ntrips);                                                                           \
  for (int a = 0; a < nteams; a += 3)                                                          \
    for (int b = 0; b < ntls && tls[b] <= 1024; b += 2) {                                      \
      reset();                                                                                 \
      bare(teams[a], tls[b]);                                                                  \
      report("bare", teams[a], tls[b], 0, -1);                                                 \
    }
#include "launch_geometry.h"

int main(void) { return geometry_main(); }
