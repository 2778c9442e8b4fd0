// The shape of XSBench's event-based lookup kernel (the offload version), as an
// application uses it: read-only tables (per-nuclide energy grids with five cross sections
// per point, materials listing their nuclides and concentrations) mapped `to`, one
// `target teams distribute parallel for` over the lookups calling `declare target`
// functions (a hash for the random stream, a binary search, an interpolation), and a
// verification array mapped `from`. The same lookups then run on data the program moves
// itself (`omp_target_alloc`, `omp_target_memcpy`, `is_device_ptr`), as ported codes do.
// Everything is integer arithmetic, so the device's answers are checked exactly against
// the host's.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NUCS 68
#define POINTS 1000
#define MATS 12
#define MAX_PER_MAT 32
#define LOOKUPS 100000
#define EMAX 1000000L

typedef struct {
  long energy;
  long xs[5];
} Point;

#pragma omp declare target
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The last point of nuclide `n`'s grid at or below `e` (the first one if none is).
static long search(const Point *grid, long n, long e) {
  long lo = 0, hi = POINTS - 1;
  const Point *g = grid + n * POINTS;
  while (hi - lo > 1) {
    long mid = lo + (hi - lo) / 2;
    if (g[mid].energy > e)
      hi = mid;
    else
      lo = mid;
  }
  return lo;
}

// Lookup `i`: the index (1..5) of the largest macroscopic cross section of a random
// material at a random energy.
static long lookup(long i, const Point *grid, const int *num, const int *mats,
                   const long *concs) {
  uint64_t r = mix((uint64_t)i);
  long e = (long)(r % (uint64_t)EMAX);
  int m = (int)((r >> 40) % MATS);
  long macro[5] = {0, 0, 0, 0, 0};
  for (int k = 0; k < num[m]; ++k) {
    long n = mats[m * MAX_PER_MAT + k];
    long at = search(grid, n, e);
    const Point *lo = grid + n * POINTS + at, *hi = lo + 1;
    long span = hi->energy - lo->energy;
    for (int x = 0; x < 5; ++x) {
      long v = lo->xs[x] + (hi->xs[x] - lo->xs[x]) * (e - lo->energy) / span;
      macro[x] += v * concs[m * MAX_PER_MAT + k];
    }
  }
  long best = 0;
  for (int x = 1; x < 5; ++x)
    if (macro[x] > macro[best]) best = x;
  return best + 1;
}
#pragma omp end declare target

static uint64_t hash(const long *v, long n) {
  uint64_t h = 0;
  for (long i = 0; i < n; ++i) h = h * 31 + (uint64_t)v[i] * (uint64_t)(i % 7 + 1);
  return h;
}

int main(void) {
  Point *grid = malloc(sizeof(Point) * NUCS * POINTS);
  int num[MATS];
  int *mats = malloc(sizeof(int) * MATS * MAX_PER_MAT);
  long *concs = malloc(sizeof(long) * MATS * MAX_PER_MAT);
  long *verification = calloc(LOOKUPS, sizeof(long));
  long *expected = malloc(sizeof(long) * LOOKUPS);
  if (!grid || !mats || !concs || !verification || !expected) return 1;
  int errors = 0;

  for (long n = 0; n < NUCS; ++n) {
    long e = 0;
    for (long p = 0; p < POINTS; ++p) {
      uint64_t r = mix((uint64_t)(n * POINTS + p) ^ 0x5bd1e995);
      // Strictly increasing, the last point above EMAX.
      e += 1 + (long)(r % (2 * EMAX / POINTS));
      if (p == POINTS - 1 && e <= EMAX) e = EMAX + 1;
      grid[n * POINTS + p].energy = p == 0 ? 0 : e;
      for (int x = 0; x < 5; ++x) grid[n * POINTS + p].xs[x] = (long)((r >> (8 * x)) & 0xffff);
    }
  }
  for (int m = 0; m < MATS; ++m) {
    num[m] = m == 0 ? MAX_PER_MAT : 4 + m % 9;
    for (int k = 0; k < num[m]; ++k) {
      mats[m * MAX_PER_MAT + k] = (int)((m * 7 + k * 13) % NUCS);
      concs[m * MAX_PER_MAT + k] = 1 + (m * 31 + k * 17) % 97;
    }
  }
  for (long i = 0; i < LOOKUPS; ++i) expected[i] = lookup(i, grid, num, mats, concs);
  uint64_t want = hash(expected, LOOKUPS);

  // Mapped tables.
#pragma omp target teams distribute parallel for map(to : grid[0:NUCS * POINTS], num, \
    mats[0:MATS * MAX_PER_MAT], concs[0:MATS * MAX_PER_MAT]) map(from : verification[0:LOOKUPS])
  for (long i = 0; i < LOOKUPS; ++i) verification[i] = lookup(i, grid, num, mats, concs);
  uint64_t got = hash(verification, LOOKUPS);
  long wrong = 0;
  for (long i = 0; i < LOOKUPS; ++i) wrong += verification[i] != expected[i];
  printf("mapped: hash %llu, %ld lookups wrong\n", (unsigned long long)got, wrong);
  if (got != want || wrong) errors++;

  // Device memory the program manages itself.
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  Point *d_grid = omp_target_alloc(sizeof(Point) * NUCS * POINTS, dev);
  int *d_num = omp_target_alloc(sizeof num, dev);
  int *d_mats = omp_target_alloc(sizeof(int) * MATS * MAX_PER_MAT, dev);
  long *d_concs = omp_target_alloc(sizeof(long) * MATS * MAX_PER_MAT, dev);
  long *d_ver = omp_target_alloc(sizeof(long) * LOOKUPS, dev);
  if (!d_grid || !d_num || !d_mats || !d_concs || !d_ver) return 1;
  int rc = omp_target_memcpy(d_grid, grid, sizeof(Point) * NUCS * POINTS, 0, 0, dev, host) |
           omp_target_memcpy(d_num, num, sizeof num, 0, 0, dev, host) |
           omp_target_memcpy(d_mats, mats, sizeof(int) * MATS * MAX_PER_MAT, 0, 0, dev, host) |
           omp_target_memcpy(d_concs, concs, sizeof(long) * MATS * MAX_PER_MAT, 0, 0, dev, host);
  if (rc) errors++;
#pragma omp target teams distribute parallel for is_device_ptr(d_grid, d_num, d_mats, d_concs, \
                                                                   d_ver) device(dev)
  for (long i = 0; i < LOOKUPS; ++i) d_ver[i] = lookup(i, d_grid, d_num, d_mats, d_concs);
  for (long i = 0; i < LOOKUPS; ++i) verification[i] = 0;
  if (omp_target_memcpy(verification, d_ver, sizeof(long) * LOOKUPS, 0, 0, host, dev)) errors++;
  got = hash(verification, LOOKUPS);
  wrong = 0;
  for (long i = 0; i < LOOKUPS; ++i) wrong += verification[i] != expected[i];
  printf("device pointers: hash %llu, %ld lookups wrong\n", (unsigned long long)got, wrong);
  if (got != want || wrong) errors++;
  omp_target_free(d_grid, dev);
  omp_target_free(d_num, dev);
  omp_target_free(d_mats, dev);
  omp_target_free(d_concs, dev);
  omp_target_free(d_ver, dev);

  long counts[6] = {0};
  for (long i = 0; i < LOOKUPS; ++i) counts[expected[i]]++;
  printf("largest cross section by index: %ld %ld %ld %ld %ld\n", counts[1], counts[2],
         counts[3], counts[4], counts[5]);
  printf("%s\n", errors ? "FAIL" : "PASS");
  free(grid);
  free(mats);
  free(concs);
  free(verification);
  free(expected);
  return errors != 0;
}
