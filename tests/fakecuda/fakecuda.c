/* A fake NVIDIA driver library (libcuda.so.1) for counting the host work of the runtime's CUDA
 * path with callgrind on a machine without a GPU (scripts/count-cuda.sh). It is not a
 * simulator: kernels do not run, so programs compute wrong results.
 *
 * It exports the entry points the CUDA plugin resolves through cudarc (crates/plugins/cuda/src,
 * `sys::cu*` calls; the plain names in the plugin's call labels, such as "cuMemAlloc", are the
 * _v2 symbols here), with the signatures of cudarc 0.19's cuda-12090 bindings. One device,
 * "Fake H200" (sm_90, 132 SMs, 141 GB). Handles are small malloc'd structs; device memory is
 * host memory (256-byte aligned); every copy and fill is done at once, so every stream and
 * event is always complete. Answers chosen on purpose:
 * - Module images that are ELF (cubins) have their object symbols read: cuModuleGetGlobal
 *   gives a buffer of the symbol's size holding its bytes from the image (zero for .bss-like
 *   sections; relocations are not applied), so the plugin reads the real kernel environments
 *   and writes the device runtime's environment as on a GPU. Other images have no globals.
 * - The plugin's staging copy kernel (staging/copy_kernel.rs: "omptarget_rs_copy", one
 *   parameter, a table of {src, dst, bytes} per block) makes its copies; other kernels do
 *   nothing.
 * - CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS is 0, as on the H200 machines (docs/GPU.md);
 *   attributes that mean a limitation (kernel timeout, integrated, TCC, MPS, compute mode)
 *   are 0; every other attribute is a plausible nonzero value.
 * - cuPointerGetAttributes: memory from cuMemAllocHost reads as pinned host memory, device,
 *   pool and module memory as device memory, managed memory as managed, anything else as
 *   memory the driver does not know (type 0), like pageable host memory on a GPU.
 * - The default memory pool counts its used and reserved bytes (reserved shrinks at
 *   cuMemPoolTrimTo and, above the release threshold, at synchronisations).
 * - Virtual memory management (cuMemCreate, cuMemMap, ...) and cuFuncGetParamInfo answer
 *   CUDA_ERROR_NOT_SUPPORTED; peer access is unsupported (one device).
 * - FAKECUDA_BUSY_QUERIES=N (tests): each stream answers its first N cuStreamQuery calls
 *   CUDA_ERROR_NOT_READY, again after each "ready" answer and synchronisation.
 * - FAKECUDA_FAULT_LAUNCH=N (tests): the Nth launch of a kernel other than the copy kernel
 *   faults, as a kernel that stores through a wild address does on a GPU: the launch itself
 *   succeeds, and from then on the context is unusable (a "sticky" error): every call that
 *   works in it, and every stream and event query, synchronisation and destruction and every
 *   free, answers CUDA_ERROR_ILLEGAL_ADDRESS.
 * - fakecuda_stream_syncs() (tests; not a driver call) answers how many cuStreamSynchronize
 *   calls were made.
 * - The current context is kept per thread (cuCtxSetCurrent). Calls that work in the current
 *   context (allocations and frees, stream, event and module creation, copies, batches and
 *   fills, kernel launches) answer CUDA_ERROR_INVALID_CONTEXT on a thread that has none, as the
 *   driver does: a runtime path that skips making its context current fails here too.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct fake_ctx *CUcontext;
typedef struct fake_stream *CUstream;
typedef struct fake_event *CUevent;
typedef struct fake_module *CUmodule;
typedef struct fake_function *CUfunction;
typedef struct fake_pool *CUmemoryPool;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct { char bytes[16]; } CUuuid;
typedef struct { int type, id; } CUmemLocation;
typedef struct {
  int srcAccessOrder;
  CUmemLocation srcLocHint, dstLocHint;
  unsigned int flags;
} CUmemcpyAttributes;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999,
};

/* CUpointer_attribute, CUmemorytype, CUmemPool_attribute, CUfunction_attribute values. */
enum { PA_CONTEXT = 1, PA_MEMORY_TYPE = 2, PA_DEVICE_POINTER = 3, PA_HOST_POINTER = 4,
       PA_IS_MANAGED = 8, PA_DEVICE_ORDINAL = 9, PA_RANGE_START_ADDR = 11, PA_RANGE_SIZE = 12,
       PA_MAPPED = 13 };
enum { MT_HOST = 1, MT_DEVICE = 2 };
enum { POOL_REUSE_FOLLOW = 1, POOL_REUSE_OPPORTUNISTIC = 2, POOL_REUSE_INTERNAL = 3,
       POOL_RELEASE_THRESHOLD = 4, POOL_RESERVED_CURRENT = 5, POOL_RESERVED_HIGH = 6,
       POOL_USED_CURRENT = 7, POOL_USED_HIGH = 8 };

#define TOTAL_MEMORY 141000000000ULL
#define ALIGN 256
#define COPY_KERNEL "omptarget_rs_copy"
#define COPY_ENTRIES 32 /* the copy kernel's table: 32 entries {src, dst, bytes} */

/* Handles: a tag in each, so that a stale or foreign handle is refused, not dereferenced. */
enum { TAG_STREAM = 0x5354, TAG_EVENT = 0x4556, TAG_MODULE = 0x4d4f, TAG_FUNC = 0x4655 };
struct fake_ctx { int device; };
/* busy: queries answered "not ready" since the stream last answered ready or was synchronised. */
struct fake_stream { int tag; int busy; };
struct fake_event { int tag; };
struct fake_pool { int device; };
struct global { char *name; void *ptr; size_t size; };
struct fake_function { int tag; int copy_kernel; struct fake_function *next; };
struct fake_module {
  int tag;
  size_t nglobals;
  struct global *globals;
  struct fake_function *functions;
};

static struct fake_ctx primary_ctx = {0};
static struct fake_pool default_pool = {0};

/* Live allocations, for frees, memory accounting and pointer attributes. */
enum kind { K_DEVICE, K_POOL, K_HOST, K_MANAGED, K_GLOBAL };
struct alloc { uintptr_t base; size_t size; enum kind kind; };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc *allocs;
static size_t nallocs, cap_allocs;
static unsigned long long device_used;    /* cuMemAlloc / cuMemAllocManaged bytes */
static unsigned long long pool_used, pool_used_high, pool_reserved, pool_reserved_high;
static unsigned long long pool_release_threshold;
static unsigned int primary_flags;
static int primary_active;

/* Memory of at least `size` bytes (1 for 0), 256-byte aligned, registered as `kind`. */
static CUresult alloc_mem(void **out, size_t size, enum kind kind) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  size_t rounded = size ? (size + ALIGN - 1) / ALIGN * ALIGN : ALIGN;
  if (rounded < size) return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&lock);
  if (kind != K_HOST && kind != K_GLOBAL &&
      device_used + pool_reserved + rounded > TOTAL_MEMORY) {
    pthread_mutex_unlock(&lock);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (nallocs == cap_allocs) {
    size_t cap = cap_allocs ? 2 * cap_allocs : 256;
    struct alloc *a = realloc(allocs, cap * sizeof *a);
    if (!a) {
      pthread_mutex_unlock(&lock);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    allocs = a, cap_allocs = cap;
  }
  void *p = aligned_alloc(ALIGN, rounded);
  if (!p) {
    pthread_mutex_unlock(&lock);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  allocs[nallocs++] = (struct alloc){(uintptr_t)p, size, kind};
  if (kind == K_DEVICE || kind == K_MANAGED) device_used += rounded;
  if (kind == K_POOL) {
    pool_used += rounded;
    if (pool_used > pool_used_high) pool_used_high = pool_used;
    if (pool_used > pool_reserved) pool_reserved = pool_used;
    if (pool_reserved > pool_reserved_high) pool_reserved_high = pool_reserved;
  }
  pthread_mutex_unlock(&lock);
  *out = p;
  return CUDA_SUCCESS;
}

/* Frees an allocation of one of the kinds in `kinds` (a bit mask) that starts at `p`. */
static CUresult free_mem(uintptr_t p, unsigned kinds) {
  pthread_mutex_lock(&lock);
  size_t i = nallocs;
  while (i > 0 && allocs[i - 1].base != p) --i; /* the newest first */
  if (i == 0 || !(kinds & (1u << allocs[i - 1].kind))) {
    pthread_mutex_unlock(&lock);
    return CUDA_ERROR_INVALID_VALUE;
  }
  struct alloc a = allocs[i - 1];
  allocs[i - 1] = allocs[--nallocs];
  size_t rounded = a.size ? (a.size + ALIGN - 1) / ALIGN * ALIGN : ALIGN;
  if (a.kind == K_DEVICE || a.kind == K_MANAGED) device_used -= rounded;
  if (a.kind == K_POOL) pool_used -= rounded; /* stays reserved until a trim */
  pthread_mutex_unlock(&lock);
  free((void *)a.base);
  return CUDA_SUCCESS;
}

/* The allocation holding address `p`, copied to *out; 0 when the driver does not know it. */
static int find_mem(uintptr_t p, struct alloc *out) {
  int found = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < nallocs; ++i)
    if (p >= allocs[i].base && p - allocs[i].base < (allocs[i].size ? allocs[i].size : 1)) {
      *out = allocs[i];
      found = 1;
      break;
    }
  pthread_mutex_unlock(&lock);
  return found;
}

/* At a synchronisation the pool gives back what it holds above its release threshold. */
static void pool_release(void) {
  pthread_mutex_lock(&lock);
  if (pool_reserved > pool_release_threshold)
    pool_reserved = pool_used > pool_release_threshold ? pool_used : pool_release_threshold;
  pthread_mutex_unlock(&lock);
}

static void *handle(size_t size, int tag) {
  int *h = malloc(size);
  if (h) *h = tag;
  return h;
}

static int is(const void *h, int tag) { return h && *(const int *)h == tag; }

/* Initialisation, devices and contexts. */

API CUresult cuInit(unsigned int flags) { return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }

API CUresult cuDriverGetVersion(int *v) {
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  *v = 12090;
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGetCount(int *n) {
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  *n = 1;
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  if (!d) return CUDA_ERROR_INVALID_VALUE;
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
  static const char fake[] = "Fake H200";
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  size_t n = (size_t)len - 1 < sizeof fake - 1 ? (size_t)len - 1 : sizeof fake - 1;
  memcpy(name, fake, n);
  name[n] = 0;
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d) {
  if (!u) return CUDA_ERROR_INVALID_VALUE;
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  static const char bytes[16] = "fake-cuda-h200-0";
  memcpy(u->bytes, bytes, 16);
  return CUDA_SUCCESS;
}

API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = TOTAL_MEMORY;
  return CUDA_SUCCESS;
}

/* An H200's answers (CUdevice_attribute values of cuda-12090). */
static int attribute(int a) {
  switch (a) {
  case 1: case 2: case 3: return 1024;       /* threads per block, block dims x, y */
  case 4: return 64;                          /* block dim z */
  case 5: return 2147483647;                  /* grid dim x */
  case 6: case 7: return 65535;               /* grid dims y, z */
  case 8: return 49152;                       /* shared memory per block */
  case 9: return 65536;                       /* constant memory */
  case 10: return 32;                         /* warp size */
  case 11: return 2147483647;                 /* max pitch */
  case 12: case 82: return 65536;             /* registers per block, per SM */
  case 13: return 1980000;                    /* clock rate, kHz */
  case 14: return 512;                        /* texture alignment */
  case 16: return 132;                        /* SMs */
  case 17: case 18: case 20: case 35: case 133: return 0; /* timeout, integrated,
                                                 compute mode default, TCC, MPS */
  case 33: return 0x19;                       /* PCI bus */
  case 36: return 3201000;                    /* memory clock, kHz */
  case 37: return 6144;                       /* bus width */
  case 38: return 60 << 20;                   /* L2 bytes */
  case 39: return 2048;                       /* threads per SM */
  case 40: return 3;                          /* copy engines */
  case 75: return 9;                          /* compute capability 9.0 */
  case 76: return 0;
  case 81: return 233472;                     /* shared memory per SM */
  case 88: case 100: return 0;                /* pageable memory access: no (the H200 VMs) */
  case 97: return 232448;                     /* shared memory per block, opt-in */
  case 106: return 32;                        /* blocks per SM */
  default: return 1;                          /* supported / present */
  }
}

API CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
  if (!v || attr <= 0 || attr >= 144) return CUDA_ERROR_INVALID_VALUE;
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  *v = attribute(attr);
  return CUDA_SUCCESS;
}

API CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer) {
  if (!can) return CUDA_ERROR_INVALID_VALUE;
  if (d != 0 || peer != 0) return CUDA_ERROR_INVALID_DEVICE;
  *can = 0;
  return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned int *flags, int *active) {
  if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&lock);
  *flags = primary_flags, *active = primary_active;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice d, unsigned int flags) {
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&lock);
  primary_flags = flags;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d) {
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&lock);
  primary_active = 1;
  pthread_mutex_unlock(&lock);
  *ctx = &primary_ctx;
  return CUDA_SUCCESS;
}

/* The context current on this thread (cuCtxSetCurrent). */
static __thread CUcontext current_ctx __attribute__((tls_model("initial-exec")));

API CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (ctx && ctx != &primary_ctx) return CUDA_ERROR_INVALID_CONTEXT;
  current_ctx = ctx;
  return CUDA_SUCCESS;
}

/* FAKECUDA_FAULT_LAUNCH (above): set at the faulting launch, never cleared. */
static int faulted;
#define STICKY \
  if (__atomic_load_n(&faulted, __ATOMIC_ACQUIRE)) return CUDA_ERROR_ILLEGAL_ADDRESS
/* At the start of a call that works in the current context (NEED_CTX includes STICKY). */
#define NEED_CTX \
  if (!current_ctx) return CUDA_ERROR_INVALID_CONTEXT; \
  STICKY

API CUresult cuCtxSetLimit(int limit, size_t value) {
  (void)limit, (void)value;
  return CUDA_SUCCESS;
}

API CUresult cuCtxSynchronize(void) {
  STICKY;
  pool_release();
  return CUDA_SUCCESS;
}

API CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
  (void)peer, (void)flags;
  return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
}

/* Errors. */

static const char *error_name(CUresult e, const char **text) {
  switch (e) {
#define E(code, name, t) case code: *text = t; return name;
    E(CUDA_SUCCESS, "CUDA_SUCCESS", "no error")
    E(CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument")
    E(CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory")
    E(CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error")
    E(CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected")
    E(CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal")
    E(CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid")
    E(CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context")
    E(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
      "peer access is not supported between these two devices")
    E(CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle")
    E(CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found")
    E(CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready")
    E(CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
      "an illegal memory access was encountered")
    E(CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure")
    E(CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported")
    E(CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error")
#undef E
  default: *text = NULL; return NULL;
  }
}

API CUresult cuGetErrorName(CUresult e, const char **name) {
  const char *text;
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  *name = error_name(e, &text);
  return *name ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuGetErrorString(CUresult e, const char **text) {
  if (!text) return CUDA_ERROR_INVALID_VALUE;
  return error_name(e, text) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Streams and events: the work is done when it is queued, so all are complete. */

API CUresult cuStreamCreate(CUstream *s, unsigned int flags) {
  (void)flags;
  NEED_CTX;
  if (!s) return CUDA_ERROR_INVALID_VALUE;
  *s = handle(sizeof(struct fake_stream), TAG_STREAM);
  if (*s) (*s)->busy = 0;
  return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

API CUresult cuStreamDestroy_v2(CUstream s) {
  STICKY;
  if (!is(s, TAG_STREAM)) return CUDA_ERROR_INVALID_HANDLE;
  s->tag = 0;
  free(s);
  return CUDA_SUCCESS;
}

/* A test setting: the count in environment variable `name` (unset or negative: 0), read once
 * into *cache (-1 until read). */
static int env_count(const char *name, int *cache) {
  if (*cache < 0) {
    const char *v = getenv(name);
    int n = v ? atoi(v) : 0;
    *cache = n < 0 ? 0 : n;
  }
  return *cache;
}

/* A null stream is the legacy default stream. */
#define CHECK_STREAM(s) \
  if ((s) && !is((s), TAG_STREAM)) return CUDA_ERROR_INVALID_HANDLE

/* FAKECUDA_BUSY_QUERIES=N: a stream answers its first N queries "not ready" (again after each
 * "ready" answer and each synchronisation), as a GPU's stream does while its work runs, so the
 * runtime's paths for work still running are taken (tests only; unset: 0). */
static int busy_queries(void) {
  static int n = -1;
  return env_count("FAKECUDA_BUSY_QUERIES", &n);
}

API CUresult cuStreamQuery(CUstream s) {
  STICKY;
  CHECK_STREAM(s);
  if (s && s->busy < busy_queries()) {
    s->busy++;
    return CUDA_ERROR_NOT_READY;
  }
  if (s) s->busy = 0;
  return CUDA_SUCCESS;
}

/* Stream synchronisations so far, for tests (fakecuda_stream_syncs). */
static unsigned long stream_syncs;
API unsigned long fakecuda_stream_syncs(void) {
  return __atomic_load_n(&stream_syncs, __ATOMIC_RELAXED);
}

API CUresult cuStreamSynchronize(CUstream s) {
  __atomic_add_fetch(&stream_syncs, 1, __ATOMIC_RELAXED);
  STICKY;
  CHECK_STREAM(s);
  if (s) s->busy = 0;
  pool_release();
  return CUDA_SUCCESS;
}

API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
  STICKY;
  (void)flags;
  CHECK_STREAM(s);
  return is(e, TAG_EVENT) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API CUresult cuEventCreate(CUevent *e, unsigned int flags) {
  (void)flags;
  NEED_CTX;
  if (!e) return CUDA_ERROR_INVALID_VALUE;
  *e = handle(sizeof(struct fake_event), TAG_EVENT);
  return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

API CUresult cuEventDestroy_v2(CUevent e) {
  STICKY;
  if (!is(e, TAG_EVENT)) return CUDA_ERROR_INVALID_HANDLE;
  e->tag = 0;
  free(e);
  return CUDA_SUCCESS;
}

API CUresult cuEventRecord(CUevent e, CUstream s) {
  STICKY;
  CHECK_STREAM(s);
  return is(e, TAG_EVENT) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API CUresult cuEventQuery(CUevent e) {
  STICKY;
  return is(e, TAG_EVENT) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API CUresult cuEventSynchronize(CUevent e) {
  STICKY;
  if (!is(e, TAG_EVENT)) return CUDA_ERROR_INVALID_HANDLE;
  pool_release();
  return CUDA_SUCCESS;
}

API CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  if (!ms) return CUDA_ERROR_INVALID_VALUE;
  if (!is(start, TAG_EVENT) || !is(end, TAG_EVENT)) return CUDA_ERROR_INVALID_HANDLE;
  *ms = 0.001f;
  return CUDA_SUCCESS;
}

/* Memory. */

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size) {
  NEED_CTX;
  if (!size) return CUDA_ERROR_INVALID_VALUE;
  return alloc_mem((void **)p, size, K_DEVICE);
}

API CUresult cuMemAllocManaged(CUdeviceptr *p, size_t size, unsigned int flags) {
  (void)flags;
  NEED_CTX;
  if (!size) return CUDA_ERROR_INVALID_VALUE;
  return alloc_mem((void **)p, size, K_MANAGED);
}

API CUresult cuMemFree_v2(CUdeviceptr p) {
  NEED_CTX;
  return free_mem((uintptr_t)p, 1u << K_DEVICE | 1u << K_MANAGED | 1u << K_POOL);
}

API CUresult cuMemAllocHost_v2(void **p, size_t size) {
  NEED_CTX;
  if (!size) return CUDA_ERROR_INVALID_VALUE;
  return alloc_mem(p, size, K_HOST);
}

API CUresult cuMemFreeHost(void *p) {
  NEED_CTX;
  return free_mem((uintptr_t)p, 1u << K_HOST);
}

API CUresult cuMemAllocAsync(CUdeviceptr *p, size_t size, CUstream s) {
  NEED_CTX;
  CHECK_STREAM(s);
  if (!size) return CUDA_ERROR_INVALID_VALUE;
  return alloc_mem((void **)p, size, K_POOL);
}

API CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  NEED_CTX;
  CHECK_STREAM(s);
  return free_mem((uintptr_t)p, 1u << K_POOL | 1u << K_DEVICE | 1u << K_MANAGED);
}

API CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
  if (!free_bytes || !total) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  *free_bytes = TOTAL_MEMORY - device_used - pool_reserved;
  pthread_mutex_unlock(&lock);
  *total = TOTAL_MEMORY;
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice d) {
  if (!pool) return CUDA_ERROR_INVALID_VALUE;
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  *pool = &default_pool;
  return CUDA_SUCCESS;
}

API CUresult cuMemPoolSetAttribute(CUmemoryPool pool, int attr, void *v) {
  if (pool != &default_pool || !v) return CUDA_ERROR_INVALID_VALUE;
  switch (attr) {
  case POOL_REUSE_FOLLOW: case POOL_REUSE_OPPORTUNISTIC: case POOL_REUSE_INTERNAL:
    return CUDA_SUCCESS;
  case POOL_RELEASE_THRESHOLD:
    pthread_mutex_lock(&lock);
    pool_release_threshold = *(unsigned long long *)v;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
  case POOL_RESERVED_HIGH: case POOL_USED_HIGH: /* only resets to 0 are allowed */
    if (*(unsigned long long *)v) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    if (attr == POOL_RESERVED_HIGH) pool_reserved_high = pool_reserved;
    else pool_used_high = pool_used;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

API CUresult cuMemPoolGetAttribute(CUmemoryPool pool, int attr, void *v) {
  if (pool != &default_pool || !v) return CUDA_ERROR_INVALID_VALUE;
  unsigned long long x;
  pthread_mutex_lock(&lock);
  switch (attr) {
  case POOL_REUSE_FOLLOW: case POOL_REUSE_OPPORTUNISTIC: case POOL_REUSE_INTERNAL:
    pthread_mutex_unlock(&lock);
    *(int *)v = 1;
    return CUDA_SUCCESS;
  case POOL_RELEASE_THRESHOLD: x = pool_release_threshold; break;
  case POOL_RESERVED_CURRENT: x = pool_reserved; break;
  case POOL_RESERVED_HIGH: x = pool_reserved_high; break;
  case POOL_USED_CURRENT: x = pool_used; break;
  case POOL_USED_HIGH: x = pool_used_high; break;
  default:
    pthread_mutex_unlock(&lock);
    return CUDA_ERROR_INVALID_VALUE;
  }
  pthread_mutex_unlock(&lock);
  *(unsigned long long *)v = x;
  return CUDA_SUCCESS;
}

API CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) {
  if (pool != &default_pool) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  if (pool_reserved > keep) pool_reserved = pool_used > keep ? pool_used : keep;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

/* What the driver knows of an address; unknown memory (pageable host memory on a GPU)
   leaves the type 0 and the call succeeds. */
API CUresult cuPointerGetAttributes(unsigned int n, int *attrs, void **data, CUdeviceptr p) {
  if (!attrs || !data) return CUDA_ERROR_INVALID_VALUE;
  struct alloc a;
  int known = find_mem((uintptr_t)p, &a);
  for (unsigned int i = 0; i < n; ++i) {
    void *d = data[i];
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    switch (attrs[i]) {
    case PA_CONTEXT: *(CUcontext *)d = known ? &primary_ctx : NULL; break;
    case PA_MEMORY_TYPE:
      *(unsigned int *)d = !known ? 0 : a.kind == K_HOST ? MT_HOST : MT_DEVICE;
      break;
    case PA_DEVICE_POINTER: *(CUdeviceptr *)d = known ? p : 0; break;
    case PA_HOST_POINTER:
      *(void **)d = known && (a.kind == K_HOST || a.kind == K_MANAGED) ? (void *)p : NULL;
      break;
    case PA_IS_MANAGED: *(unsigned int *)d = known && a.kind == K_MANAGED; break;
    case PA_DEVICE_ORDINAL: *(int *)d = known ? 0 : -2; break;
    case PA_RANGE_START_ADDR: *(CUdeviceptr *)d = known ? a.base : 0; break;
    case PA_RANGE_SIZE: *(size_t *)d = known ? a.size : 0; break;
    case PA_MAPPED: *(unsigned char *)d = (unsigned char)known; break;
    default: break; /* not asked by the plugin: left as it is */
    }
  }
  return CUDA_SUCCESS;
}

API CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p) {
  struct alloc a;
  if (!data) return CUDA_ERROR_INVALID_VALUE;
  if (!find_mem((uintptr_t)p, &a)) return CUDA_ERROR_INVALID_VALUE; /* as the driver */
  return cuPointerGetAttributes(1, &attr, &data, p);
}

/* Copies and fills happen at once, whatever the stream. */

API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
  NEED_CTX;
  if (n) memcpy((void *)dst, src, n);
  return CUDA_SUCCESS;
}

API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  NEED_CTX;
  if (n) memcpy(dst, (const void *)src, n);
  return CUDA_SUCCESS;
}

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
  NEED_CTX;
  CHECK_STREAM(s);
  if (n) memcpy((void *)dst, src, n);
  return CUDA_SUCCESS;
}

API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s) {
  NEED_CTX;
  CHECK_STREAM(s);
  if (n) memcpy(dst, (const void *)src, n);
  return CUDA_SUCCESS;
}

API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  NEED_CTX;
  CHECK_STREAM(s);
  if (n) memmove((void *)dst, (const void *)src, n);
  return CUDA_SUCCESS;
}

API CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                               CUcontext src_ctx, size_t n, CUstream s) {
  (void)dst_ctx, (void)src_ctx;
  CHECK_STREAM(s);
  if (n) memmove((void *)dst, (const void *)src, n);
  return CUDA_SUCCESS;
}

/* CUDA 12.8's batch: copy i goes from srcs[i] to dsts[i], sizes[i] bytes; attrs[k] applies
   from copy attrsIdxs[k] on (the first index must be 0); *failIdx is SIZE_MAX unless a
   copy failed. */
API CUresult cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                                size_t numAttrs, size_t *failIdx, CUstream s) {
  NEED_CTX;
  CHECK_STREAM(s);
  if (failIdx) *failIdx = SIZE_MAX;
  if (!count || !dsts || !srcs || !sizes || !attrs || !attrsIdxs || !numAttrs ||
      numAttrs > count || attrsIdxs[0] != 0)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i)
    if (sizes[i]) memcpy((void *)dsts[i], (const void *)srcs[i], sizes[i]);
  return CUDA_SUCCESS;
}

API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream s) {
  NEED_CTX;
  CHECK_STREAM(s);
  if (n) memset((void *)dst, value, n);
  return CUDA_SUCCESS;
}

/* Modules: a cubin's object symbols become globals holding their initial bytes. */

static void read_globals(struct fake_module *m, const unsigned char *img) {
  Elf64_Ehdr eh;
  memcpy(&eh, img, sizeof eh);
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shoff)
    return;
  Elf64_Shdr *sh = malloc(eh.e_shnum * sizeof *sh);
  if (!sh) return;
  memcpy(sh, img + eh.e_shoff, eh.e_shnum * sizeof *sh);
  for (unsigned s = 0; s < eh.e_shnum; ++s) {
    if (sh[s].sh_type != SHT_SYMTAB || sh[s].sh_link >= eh.e_shnum) continue;
    const char *names = (const char *)img + sh[sh[s].sh_link].sh_offset;
    size_t n = sh[s].sh_size / sizeof(Elf64_Sym);
    for (size_t k = 0; k < n; ++k) {
      Elf64_Sym sym;
      memcpy(&sym, img + sh[s].sh_offset + k * sizeof sym, sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_shndx == SHN_UNDEF ||
          sym.st_shndx >= eh.e_shnum || !names[sym.st_name])
        continue;
      struct global *g = realloc(m->globals, (m->nglobals + 1) * sizeof *g);
      if (!g) break;
      m->globals = g;
      g += m->nglobals;
      void *p;
      if (alloc_mem(&p, sym.st_size, K_GLOBAL) != CUDA_SUCCESS) break;
      g->name = strdup(names + sym.st_name);
      g->ptr = p;
      g->size = sym.st_size;
      memset(p, 0, sym.st_size ? sym.st_size : 1);
      const Elf64_Shdr *in = &sh[sym.st_shndx];
      if (in->sh_type == SHT_PROGBITS && sym.st_value + sym.st_size <= in->sh_size)
        memcpy(p, img + in->sh_offset + sym.st_value, sym.st_size);
      ++m->nglobals;
    }
  }
  free(sh);
}

API CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned int nopts,
                                int *opts, void **values) {
  (void)nopts, (void)opts, (void)values;
  NEED_CTX;
  if (!mod || !image) return CUDA_ERROR_INVALID_VALUE;
  struct fake_module *m = calloc(1, sizeof *m);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  m->tag = TAG_MODULE;
  read_globals(m, image);
  *mod = m;
  return CUDA_SUCCESS;
}

API CUresult cuModuleLoadData(CUmodule *mod, const void *image) {
  return cuModuleLoadDataEx(mod, image, 0, NULL, NULL);
}

API CUresult cuModuleUnload(CUmodule m) {
  if (!is(m, TAG_MODULE)) return CUDA_ERROR_INVALID_HANDLE;
  for (size_t i = 0; i < m->nglobals; ++i) {
    free_mem((uintptr_t)m->globals[i].ptr, 1u << K_GLOBAL);
    free(m->globals[i].name);
  }
  free(m->globals);
  for (struct fake_function *f = m->functions, *next; f; f = next) {
    next = f->next;
    f->tag = 0;
    free(f);
  }
  m->tag = 0;
  free(m);
  return CUDA_SUCCESS;
}

API CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule m,
                                  const char *name) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  if (!is(m, TAG_MODULE)) return CUDA_ERROR_INVALID_HANDLE;
  for (size_t i = 0; i < m->nglobals; ++i)
    if (!strcmp(m->globals[i].name, name)) {
      if (dptr) *dptr = (CUdeviceptr)(uintptr_t)m->globals[i].ptr;
      if (bytes) *bytes = m->globals[i].size;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

/* Any name is a kernel of the module (the image is not searched for it). */
API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  if (!f || !name) return CUDA_ERROR_INVALID_VALUE;
  if (!is(m, TAG_MODULE)) return CUDA_ERROR_INVALID_HANDLE;
  struct fake_function *fn = calloc(1, sizeof *fn);
  if (!fn) return CUDA_ERROR_OUT_OF_MEMORY;
  fn->tag = TAG_FUNC;
  fn->copy_kernel = !strcmp(name, COPY_KERNEL);
  pthread_mutex_lock(&lock);
  fn->next = m->functions;
  m->functions = fn;
  pthread_mutex_unlock(&lock);
  *f = fn;
  return CUDA_SUCCESS;
}

API CUresult cuFuncGetAttribute(int *v, int attr, CUfunction f) {
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  if (!is(f, TAG_FUNC)) return CUDA_ERROR_INVALID_HANDLE;
  switch (attr) {
  case 0: *v = 1024; break;              /* max threads per block */
  case 1: case 2: case 3: *v = 0; break; /* static shared, constant, local bytes */
  case 4: *v = 64; break;                /* registers */
  case 5: case 6: *v = 90; break;        /* PTX and binary versions */
  case 8: *v = 48 * 1024; break;         /* max dynamic shared bytes */
  default:
    if (attr < 0 || attr >= 16) return CUDA_ERROR_INVALID_VALUE;
    *v = 0;
  }
  return CUDA_SUCCESS;
}

/* Parameter layout unknown here (the plugin then uses the size it was given). */
API CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset, size_t *size) {
  (void)index, (void)offset, (void)size;
  return is(f, TAG_FUNC) ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_HANDLE;
}

/* FAKECUDA_FAULT_LAUNCH=N (above; unset or 0: no fault). */
static int fault_launch(void) {
  static int n = -1;
  return env_count("FAKECUDA_FAULT_LAUNCH", &n);
}
static int launches;

/* Kernels do not run, except the staging copy kernel: block b copies entry b of its table. */
API CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                            unsigned int bx, unsigned int by, unsigned int bz,
                            unsigned int shared, CUstream s, void **params, void **extra) {
  (void)shared, (void)extra;
  NEED_CTX;
  CHECK_STREAM(s);
  if (!is(f, TAG_FUNC)) return CUDA_ERROR_INVALID_HANDLE;
  if (!gx || !gy || !gz || !bx || !by || !bz || (unsigned long long)bx * by * bz > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  if (!f->copy_kernel && fault_launch() > 0 &&
      __atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED) == fault_launch())
    __atomic_store_n(&faulted, 1, __ATOMIC_RELEASE);
  if (f->copy_kernel) {
    if (!params || !params[0] || gx > COPY_ENTRIES || gy != 1 || gz != 1)
      return CUDA_ERROR_INVALID_VALUE;
    const uint64_t *t = params[0];
    for (unsigned int b = 0; b < gx; ++b)
      if (t[3 * b + 2]) memcpy((void *)t[3 * b + 1], (const void *)t[3 * b], t[3 * b + 2]);
  }
  return CUDA_SUCCESS;
}

/* Virtual memory management: not offered (record and replay falls back to cuMemAlloc). */

API CUresult cuMemGetAllocationGranularity(size_t *g, const void *prop, int flags) {
  (void)g, (void)prop, (void)flags;
  return CUDA_ERROR_NOT_SUPPORTED;
}
API CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr addr,
                                 unsigned long long flags) {
  (void)p, (void)size, (void)align, (void)addr, (void)flags;
  return CUDA_ERROR_NOT_SUPPORTED;
}
API CUresult cuMemAddressFree(CUdeviceptr p, size_t size) {
  (void)p, (void)size;
  return CUDA_ERROR_NOT_SUPPORTED;
}
API CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const void *prop,
                         unsigned long long flags) {
  (void)h, (void)size, (void)prop, (void)flags;
  return CUDA_ERROR_NOT_SUPPORTED;
}
API CUresult cuMemRelease(CUmemGenericAllocationHandle h) {
  (void)h;
  return CUDA_ERROR_NOT_SUPPORTED;
}
API CUresult cuMemMap(CUdeviceptr p, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                      unsigned long long flags) {
  (void)p, (void)size, (void)offset, (void)h, (void)flags;
  return CUDA_ERROR_NOT_SUPPORTED;
}
API CUresult cuMemUnmap(CUdeviceptr p, size_t size) {
  (void)p, (void)size;
  return CUDA_ERROR_NOT_SUPPORTED;
}
API CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const void *desc, size_t count) {
  (void)p, (void)size, (void)desc, (void)count;
  return CUDA_ERROR_NOT_SUPPORTED;
}
