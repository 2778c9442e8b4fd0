// Whether the default device is a GPU: a target region reports what the code it runs was
// compiled for. Programs that choose their case lists by the device include this.
#pragma omp declare target
static int compiled_for_gpu(void) {
#if defined(__NVPTX__) || defined(__AMDGPU__)
  return 1;
#else
  return 0;
#endif
}
#pragma omp end declare target

static int default_device_is_gpu(void) {
  int gpu = 0;
#pragma omp target map(from : gpu)
  gpu = compiled_for_gpu();
  return gpu;
}
