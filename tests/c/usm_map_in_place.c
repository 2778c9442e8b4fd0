// GPU-UNCOMPARED: unified shared memory on an H200 without HMM/ATS (PAGEABLE_MEMORY_ACCESS 0): ours refuses at registration, LLVM 19 faults (docs/GPU.md)
// `#pragma omp requires unified_shared_memory` (OpenMP 5.2 §8.2.1, §5.8.3): host data
// mapped without `close` is used in place on the device, as LLVM 19 does: no device copy,
// so device writes are visible on the host as soon as the region ends (even inside a `target
// data` region that maps the data `to` only), the data is not "present" (nothing is mapped),
// and `omp_get_mapped_ptr` finds no device copy.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#pragma omp requires unified_shared_memory

int main(void) {
  int dev = omp_get_default_device();
  int errors = 0;
  int stack[4] = {1, 2, 3, 4};
  int *heap = malloc(8 * sizeof(int));
  for (int i = 0; i < 8; i++)
    heap[i] = 10 * i;

#pragma omp target map(tofrom : stack) map(to : heap[0 : 8])
  for (int i = 0; i < 4; i++) {
    stack[i] += 100;
    heap[i] += 1; // `to` only: with a device copy this would not reach the host
  }
  printf("stack %d %d %d %d heap %d %d %d %d\n", stack[0], stack[1], stack[2], stack[3],
         heap[0], heap[1], heap[2], heap[3]);
  if (stack[3] != 104 || heap[3] != 31)
    errors++;

#pragma omp target data map(to : heap[0 : 8])
  {
    printf("in data region: present %d mapped %s\n", omp_target_is_present(heap, dev),
           omp_get_mapped_ptr(heap, dev) ? "yes" : "no");
#pragma omp target
    heap[7] = -7;
    // Visible now, before the data region ends.
    printf("heap[7] inside the data region: %d\n", heap[7]);
    if (heap[7] != -7)
      errors++;
    heap[6] = 66; // a host write the next region sees without an update
#pragma omp target map(tofrom : errors)
    if (heap[6] != 66)
      errors++;
  }

  // Pointers inside host data are used as they are: a linked list built on the host is
  // walked on the device without mapping its nodes.
  struct node {
    int value;
    struct node *next;
  } n3 = {3, NULL}, n2 = {2, &n3}, n1 = {1, &n2};
  struct node *head = &n1;
  int sum = 0;
#pragma omp target map(tofrom : sum)
  for (struct node *n = head; n; n = n->next) {
    sum += n->value;
    n->value *= 10;
  }
  printf("list sum %d, values now %d %d %d\n", sum, n1.value, n2.value, n3.value);
  if (sum != 6 || n3.value != 30)
    errors++;

  free(heap);
  printf("%s\n", errors ? "FAILED" : "PASSED");
  return errors;
}
