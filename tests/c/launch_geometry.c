// GPU-TIMEOUT-S: 300 (hundreds of launches, up to 2^31 - 1 teams, while other programs share the GPU)
// Launch geometry, differential: every execution mode with clause values around every limit
// (see launch_geometry.h). Under LLVM's runtime and ours the lines must be identical; on a GPU
// a num_teams clause above 65,536 is launched as asked, up to the grid's limit (2^31 - 1).
#define GEOMETRY_CASES                                                                         \
  run_teams("generic", tp_nt_tl, tp_nt, tp_tl, tp_none, teams, nteams, tls, ntls, nths,       \
            nnths);                                                                            \
  run_teams("gen-spmd", gs_any_nt_tl, gs_any_nt, gs_any_tl, gs_any_none, teams, nteams, tls,  \
            ntls, nths, nnths);                                                                \
  run_loops("spmd", spmd_nt_tl, spmd_nt, spmd_tl, spmd_none, teams, nteams, tls, ntls, trips, \
            ntrips);                                                                           \
  run_loops("distribute", dist_nt_tl, 0, 0, dist_none, teams, nteams, tls, ntls, trips,       \
            ntrips > 3 ? 3 : ntrips);                                                          \
  for (int a = 0; a < nteams; a++)                                                             \
    for (int b = 0; b < ntls; b++) {                                                           \
      /* Over 1024 threads the driver refuses a bare launch, which ends the program            \
         (launch_registers.c shows that failure). */                                           \
      if (tls[b] > 1024 || (teams[a] > 70000 && tls[b] > 33)) continue;                        \
      reset();                                                                                 \
      bare(teams[a], tls[b]);                                                                  \
      report("bare", teams[a], tls[b], 0, -1);                                                 \
    }                                                                                          \
  if (gpu) {                                                                                   \
    /* The grid's limit: 2^31 - 1 teams of one thread. */                                      \
    reset();                                                                                   \
    gs_any_nt_tl(2147483647, 1, 1);                                                            \
    report("gen-spmd", 2147483647, 1, 1, -1);                                                  \
    reset();                                                                                   \
    bare(2147483647, 1);                                                                       \
    report("bare", 2147483647, 1, 0, -1);                                                      \
  }
#include "launch_geometry.h"

int main(void) { return geometry_main(); }
