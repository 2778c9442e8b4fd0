// Struct with a pointer member mapped together with its pointee:
// map(s) map(s.p[0:n]) (clang emits the pointee as PTR_AND_OBJ of s.p).
// Device writes through s.p reach the host pointee; after the region the
// host copy of s keeps its HOST pointer value (the shadow pointer is
// restored), even though s itself is copied back with map(from/tofrom: s).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct S {
  int n;
  int *p;
  int tag;
};

int main(void) {
  int errors = 0;
  int dev = omp_get_default_device();
  int n = 8;
  int *buf = malloc(n * sizeof(int));
  for (int i = 0; i < n; ++i) buf[i] = i;
  struct S s = {n, buf, 7};

  /* 1. tofrom struct + pointee: writes through s.p and to s.tag come back */
#pragma omp target map(tofrom : s) map(tofrom : s.p[0:n])
  {
    for (int i = 0; i < s.n; ++i) s.p[i] += 100;
    s.tag = 70;
  }
  printf("1: p kept=%d tag=%d p[0]=%d p[7]=%d\n", s.p == buf, s.tag, buf[0], buf[7]);
  if (s.p != buf || s.tag != 70 || buf[0] != 100 || buf[7] != 107) errors++;

  /* 2. the device sees a pointer different from the host one on a
        separate-memory device, pointing to the device copy of buf */
  int sees_host = -1, sees_mapped = -1;
  void *mapped = NULL;
#pragma omp target data map(to : s) map(tofrom : s.p[0:n])
  {
    mapped = omp_get_mapped_ptr(buf, dev);
#pragma omp target map(from : sees_host, sees_mapped) map(to : mapped)
    {
      sees_host = (s.p == buf);
      sees_mapped = (s.p == (int *)mapped);
      s.p[1] = -1;
    }
  }
  printf("2: device s.p == mapped=%d buf[1]=%d s.p kept=%d\n", sees_mapped, buf[1], s.p == buf);
  if (sees_mapped != 1 || buf[1] != -1 || s.p != buf) errors++;

  /* 3. map(from: s) only copies the struct back; s.p is restored to host value */
  s.tag = 1;
#pragma omp target map(from : s) map(to : s.p[0:n])
  {
    s.tag = 2;
    s.n = n;
    s.p[2] = 555; /* not copied back: pointee is 'to' */
  }
  printf("3: tag=%d n=%d p kept=%d buf[2]=%d\n", s.tag, s.n, s.p == buf, buf[2]);
  if (s.tag != 2 || s.p != buf || buf[2] != 102) errors++;

  /* 4. pointee section not starting at 0 */
#pragma omp target map(tofrom : s) map(tofrom : s.p[4:4])
  {
    for (int i = 4; i < 8; ++i) s.p[i] = -i;
  }
  printf("4: buf[3]=%d buf[4]=%d buf[7]=%d p kept=%d\n", buf[3], buf[4], buf[7], s.p == buf);
  if (buf[3] != 103 || buf[4] != -4 || buf[7] != -7 || s.p != buf) errors++;

  /* 5. nothing left mapped */
  int left = omp_target_is_present(&s, dev) + omp_target_is_present(buf, dev);
  printf("5: left mapped=%d\n", left);
  if (left) errors++;

  free(buf);
  printf("%s (errors=%d)\n", errors == 0 ? "PASS" : "FAIL", errors);
  return 0;
}
