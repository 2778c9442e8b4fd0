// Nested mappers whose members have different map types (OpenMP 5.2 §5.8.8, map-type decay of
// §5.8.3): an outer struct mapped `tofrom` through its default mapper, whose member struct's
// mapper maps one member `from`, one `to`, one `tofrom` and a pointee `tofrom`. On a region
// the `to` member and the pointee are copied in, the `from` member is not; at the end the
// `from` and `tofrom` members and the pointee come back, the `to` member does not. With the
// outer item mapped `to` only, nothing comes back; mapped `from`, nothing goes in.
#include <omp.h>
#include <stdio.h>

typedef struct {
  int in;
  int out;
  int both;
  int *buf;
} part_t;

typedef struct {
  int tag;
  part_t part;
} whole_t;

#pragma omp declare mapper(part_t p) map(to : p.in) map(from : p.out) map(tofrom : p.both) \
    map(tofrom : p.buf[0:2])
#pragma omp declare mapper(whole_t w) map(w.tag, w.part)

int main(void) {
  int errors = 0;
  int b1[2] = {5, 6}, b2[2] = {5, 6}, b3[2] = {5, 6};
  whole_t w1 = {1, {10, 20, 30, b1}}, w2 = {1, {10, 20, 30, b2}}, w3 = {1, {10, 20, 30, b3}};
  int seen = 0;

#pragma omp target map(tofrom : w1) map(from : seen)
  {
    seen = w1.part.in + w1.part.both + w1.part.buf[1];
    w1.part.in = -1;
    w1.part.out = -2;
    w1.part.both = -3;
    w1.part.buf[0] = -4;
    w1.tag = -5;
  }
  printf("tofrom: seen=%d in=%d out=%d both=%d buf[0]=%d tag=%d\n", seen, w1.part.in,
         w1.part.out, w1.part.both, w1.part.buf[0], w1.tag);
  if (seen != 46 || w1.part.in != 10 || w1.part.out != -2 || w1.part.both != -3 ||
      b1[0] != -4 || w1.tag != -5)
    errors++;

#pragma omp target map(to : w2) map(from : seen)
  {
    seen = w2.part.in + w2.part.both + w2.part.buf[0];
    w2.part.out = -2;
    w2.part.both = -3;
    w2.part.buf[0] = -4;
  }
  printf("to: seen=%d out=%d both=%d buf[0]=%d\n", seen, w2.part.out, w2.part.both, b2[0]);
  if (seen != 45 || w2.part.out != 20 || w2.part.both != 30 || b2[0] != 5) errors++;

#pragma omp target map(from : w3)
  {
    w3.part.out = -2;
    w3.part.both = -3;
    w3.part.buf[1] = -4;
  }
  printf("from: out=%d both=%d buf[1]=%d in=%d\n", w3.part.out, w3.part.both, b3[1],
         w3.part.in);
  if (w3.part.out != -2 || w3.part.both != -3 || b3[1] != -4 || w3.part.in != 10) errors++;

  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
