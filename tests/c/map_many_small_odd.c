// Many small items of odd sizes and alignments in one construct, both ways: on a GPU the
// runtime may move a construct's small copies together (one batch, or one launch of a copy
// kernel that scatters them to the device and gathers them back), so every byte of every
// item must still land where it belongs, neighbours untouched. Sections start at odd
// offsets (1, 3, 5 bytes in) and have sizes that are not multiples of 8 (13, 7, 4004 bytes),
// beside 8-byte-aligned ones; `to`, `from` and `tofrom` items are mixed in one region, then
// in enter/update/exit data.
#include <stdio.h>
#include <string.h>

static unsigned char c1[64], c2[64], c3[32];
static int i1[1001], i2[17];
static double d1[128], d2[3];
static short s1[9];

static unsigned sum(const void *p, size_t n) {
  const unsigned char *b = p;
  unsigned h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 16777619u;
  return h;
}

static void fill(void) {
  for (int i = 0; i < 64; i++) c1[i] = (unsigned char)(i + 1), c2[i] = (unsigned char)(200 - i);
  for (int i = 0; i < 32; i++) c3[i] = (unsigned char)(3 * i);
  for (int i = 0; i < 1001; i++) i1[i] = i * 7 - 3;
  for (int i = 0; i < 17; i++) i2[i] = -i;
  for (int i = 0; i < 128; i++) d1[i] = i * 0.5;
  for (int i = 0; i < 3; i++) d2[i] = 100.0 + i;
  for (int i = 0; i < 9; i++) s1[i] = (short)(i * 11);
}

static void print(const char *what) {
  printf("%s: c1 %08x c2 %08x c3 %08x i1 %08x i2 %08x d1 %08x d2 %08x s1 %08x\n", what,
         sum(c1, sizeof c1), sum(c2, sizeof c2), sum(c3, sizeof c3), sum(i1, sizeof i1),
         sum(i2, sizeof i2), sum(d1, sizeof d1), sum(d2, sizeof d2), sum(s1, sizeof s1));
}

int main(void) {
  fill();
  // One region: 8 items, odd offsets and sizes, each direction.
#pragma omp target map(tofrom : c1[1 : 13], c2[3 : 7], i1[1 : 1001 - 1], d2) \
    map(to : c3[5 : 20], i2) map(from : d1[0 : 128], s1[1 : 7])
  {
    for (int i = 1; i < 14; i++) c1[i] += 1;
    for (int i = 3; i < 10; i++) c2[i] ^= 0x5a;
    for (int i = 1; i < 1001; i++) i1[i] += c3[5 + i % 20] + i2[i % 17];
    for (int i = 0; i < 3; i++) d2[i] *= 2.0;
    for (int i = 0; i < 128; i++) d1[i] = i * 0.25;
    for (int i = 1; i < 8; i++) s1[i] = (short)(-i);
  }
  print("region");
  printf("c1[0]=%d c1[14]=%d c2[2]=%d c2[10]=%d s1[0]=%d s1[8]=%d i1[0]=%d\n", c1[0], c1[14],
         c2[2], c2[10], s1[0], s1[8], i1[0]);

  // The same items through enter / update / exit data.
  fill();
#pragma omp target enter data map(to : c1[1 : 13], c2[3 : 7], c3[5 : 20], i1[1 : 1000], i2, d2, \
                                  s1[1 : 7])
  for (int i = 0; i < 64; i++) c1[i] = 0;
  memset(i1, 0, sizeof i1);
#pragma omp target map(alloc : c1[1 : 13], i1[1 : 1000], d2, s1[1 : 7])
  {
    for (int i = 1; i < 14; i++) c1[i] = (unsigned char)(c1[i] * 3);
    for (int i = 1; i < 1001; i++) i1[i] = i1[i] / 2;
    d2[1] = -1.0;
    s1[4] = 4444;
  }
#pragma omp target update from(c1[1 : 13], i1[1 : 1000], d2, s1[1 : 7])
  print("update");
#pragma omp target exit data map(from : c2[3 : 7]) map(delete : c1[1 : 13], c3[5 : 20], \
                                 i1[1 : 1000], i2, d2, s1[1 : 7])
  print("exit");
  return 0;
}
