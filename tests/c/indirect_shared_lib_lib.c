// Shared library used by indirect_shared_lib.c: its own offload image with indirect
// functions and a target region that calls a function pointer it is given.
typedef int (*op_t)(int);

#pragma omp begin declare target indirect
int lib_negate(int x) { return -x; }
int lib_triple(int x) { return 3 * x; }
#pragma omp end declare target

op_t lib_op(int which) { return which ? lib_triple : lib_negate; }

int lib_apply(op_t f, int x) {
  int r = 0;
#pragma omp target map(from : r) firstprivate(f, x)
  r = f(x);
  return r;
}
