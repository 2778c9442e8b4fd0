// HOST-ONLY: what it checks is the host device's interop answer (no foreign runtime); on a GPU the object is a CUDA one (gpu/tools/interop_stream.c)
// DIVERGENCE: LLVM 19 crashes (SIGSEGV) on `interop init(targetsync:)` for a device without interop support (it dereferences the omp_interop_none it just stored) and on every omp_get_interop_* query of omp_interop_none; omp_get_interop_name/type_desc return NULL for every property and omp_get_interop_rc_desc is not reached (libomp 19 looks up "omp_get_interop_rec_desc"). OpenMP 5.2 §14.2 asks for omp_irc_empty on omp_interop_none and for names and descriptions of each property
// OURS-STDERR(clang19): "PluginInterface" error: Failure to initialize device info at 0xADDR on device 0: initDeviceInfoImpl not supported
// OURS-STDERR: omptarget error: interop use: the interop object is omp_interop_none
// The interop routines on whatever the default device is: an object exists exactly when
// the device has a foreign runtime (CUDA: the driver is loaded), its properties are those of
// the CUDA driver API; every query of omp_interop_none says omp_irc_empty; names, type and
// return-code descriptions exist for every property and code. Output is the same on the host
// device (no object) and on a GPU (an object): each line is a verdict.
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

static int errors;
#define CHECK(c, ...)                                                          \
  do {                                                                         \
    if (!(c)) {                                                                \
      printf("FAIL line %d: ", __LINE__);                                      \
      printf(__VA_ARGS__);                                                     \
      printf("\n");                                                            \
      ++errors;                                                                \
    }                                                                          \
  } while (0)

static void check_none_queries(void) {
  for (int p = omp_ipr_first; p < 0; ++p) {
    int rc = 7;
    CHECK(omp_get_interop_int(omp_interop_none, p, &rc) == 0 && rc == omp_irc_empty,
          "int of none, property %d: rc %d", p, rc);
    rc = 7;
    CHECK(omp_get_interop_ptr(omp_interop_none, p, &rc) == NULL && rc == omp_irc_empty,
          "ptr of none, property %d: rc %d", p, rc);
    rc = 7;
    CHECK(omp_get_interop_str(omp_interop_none, p, &rc) == NULL && rc == omp_irc_empty,
          "str of none, property %d: rc %d", p, rc);
    CHECK(omp_get_interop_name(omp_interop_none, p) != NULL, "no name for %d", p);
    CHECK(omp_get_interop_type_desc(omp_interop_none, p) != NULL, "no type for %d", p);
  }
  CHECK(omp_get_interop_int(omp_interop_none, omp_ipr_device_num, NULL) == 0, "null rc");
  for (int rc = omp_irc_other; rc <= omp_irc_no_value; ++rc)
    CHECK(omp_get_interop_rc_desc(omp_interop_none, rc) != NULL, "no description of rc %d", rc);
  CHECK(omp_get_num_interop_properties(omp_interop_none) == 0, "implementation properties");
  static const char *names[] = {"targetsync", "device_context", "device", "platform",
                                "device_num", "vendor_name", "vendor", "fr_name", "fr_id"};
  for (int p = omp_ipr_first; p < 0; ++p) {
    const char *n = omp_get_interop_name(omp_interop_none, p);
    CHECK(n && strcmp(n, names[p - omp_ipr_first]) == 0, "name of %d: %s", p, n ? n : "NULL");
  }
}

static void check_object(omp_interop_t obj, int dev) {
  int rc = 7;
  CHECK(omp_get_interop_int(obj, omp_ipr_fr_id, &rc) == omp_ifr_cuda_driver && rc == 0,
        "fr_id rc %d", rc);
  const char *s = omp_get_interop_str(obj, omp_ipr_fr_name, &rc);
  CHECK(s && strcmp(s, "cuda_driver") == 0 && rc == 0, "fr_name %s", s ? s : "NULL");
  CHECK(omp_get_interop_int(obj, omp_ipr_vendor, &rc) == 11 && rc == 0, "vendor");
  s = omp_get_interop_str(obj, omp_ipr_vendor_name, &rc);
  CHECK(s && strcmp(s, "nvidia") == 0 && rc == 0, "vendor_name %s", s ? s : "NULL");
  CHECK(omp_get_interop_int(obj, omp_ipr_device_num, &rc) == dev && rc == 0, "device_num");
  (void)omp_get_interop_int(obj, omp_ipr_device, &rc);
  CHECK(rc == 0, "device rc %d", rc);
  CHECK(omp_get_interop_ptr(obj, omp_ipr_device_context, &rc) != NULL && rc == 0, "context");
  CHECK(omp_get_interop_ptr(obj, omp_ipr_targetsync, &rc) != NULL && rc == 0, "targetsync");
  CHECK(omp_get_interop_ptr(obj, omp_ipr_platform, &rc) == NULL && rc == omp_irc_no_value,
        "platform rc %d", rc);
  CHECK(omp_get_interop_int(obj, omp_ipr_fr_name, &rc) == 0 && rc == omp_irc_type_str,
        "fr_name as int rc %d", rc);
  CHECK(omp_get_interop_str(obj, omp_ipr_targetsync, &rc) == NULL && rc == omp_irc_type_ptr,
        "targetsync as str rc %d", rc);
  CHECK(omp_get_interop_ptr(obj, omp_ipr_fr_id, &rc) == NULL && rc == omp_irc_type_int,
        "fr_id as ptr rc %d", rc);
  CHECK(omp_get_interop_int(obj, 0, &rc) == 0 && rc == omp_irc_out_of_range, "id 0 rc %d", rc);
  CHECK(omp_get_interop_int(obj, omp_ipr_first - 1, &rc) == 0 && rc == omp_irc_out_of_range,
        "id -10 rc %d", rc);
  s = omp_get_interop_type_desc(obj, omp_ipr_targetsync);
  CHECK(s && strcmp(s, "CUstream") == 0, "targetsync type %s", s ? s : "NULL");
}

int main(void) {
  int dev = omp_get_default_device();
  int ndev = omp_get_num_devices();
  int x = 0;
  omp_interop_t obj = omp_interop_none;
#pragma omp target map(tofrom : x) depend(out : x) nowait
  x = 1;
#pragma omp interop init(targetsync : obj) depend(inout : x)
  int cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) != NULL;
  CHECK(ndev > 0, "no devices");
  CHECK((obj != omp_interop_none) == cuda, "an object exactly when the device has CUDA");
  CHECK(x == 1, "init waited for its dependence");
  check_none_queries();
  if (obj != omp_interop_none)
    check_object(obj, dev);
#pragma omp interop use(obj) depend(inout : x)
#pragma omp interop use(obj) depend(inout : x) nowait
#pragma omp interop destroy(obj) depend(inout : x) nowait
#pragma omp taskwait
  CHECK(obj == omp_interop_none, "destroy resets the variable");
  printf("interop routines: %s\n", errors ? "errors" : "as specified");
  return errors != 0;
}
