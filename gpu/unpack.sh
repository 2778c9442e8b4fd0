# Sourced by the GPU scripts (run.sh, verify.sh, share.sh, mpi.sh) on the GPU machine.
#
# unpack_out: gpu/build.sh packs gpu/out into gpu/out-pack (what the device tool carries):
#   unpack it when gpu/out is missing or older than the pack (a warm machine keeps the gpu/out
#   of an earlier call).
# gpu_setup: what the GPU scripts start with: unpack_out, then G (the suite folder, GPU_OUT or
#   gpu/out), EXTRA (the driver's folder, EXTRA_LIB or /usr/local/nvidia/lib64) and LLVM19_DIR
#   (as given, else llvm19_dir's). Fails when the pack cannot be unpacked.
# llvm19_dir DIR_VAR: LLVM 19's runtime, unpacked from gpu/out/llvm19.tar.xz into
#   /tmp/omptarget-llvm19 once; sets the named variable to its folder (empty when there is no
#   bundle).
unpack_out() {
  local pack=gpu/out-pack
  [[ -f $pack/out.tar.xz ]] || return 0
  if [[ ! -f gpu/out/BUILD-INFO.txt || $pack/out.tar.xz -nt gpu/out/BUILD-INFO.txt ]]; then
    tar -C gpu -xJf "$pack/out.tar.xz" || return 1
    [[ $pack/llvm19.tar.xz -ef gpu/out/llvm19.tar.xz ]] || cp "$pack/llvm19.tar.xz" gpu/out/ || return 1
  fi
}

llvm19_dir() {
  local dir=/tmp/omptarget-llvm19/llvm19 bundle=${GPU_OUT:-gpu/out}/llvm19.tar.xz
  if [[ ! -f $dir/libomptarget.so.19.1 && -f $bundle ]]; then
    mkdir -p /tmp/omptarget-llvm19 && tar -C /tmp/omptarget-llvm19 -xJf "$bundle"
  fi
  if [[ -f $dir/libomptarget.so.19.1 ]]; then printf -v "$1" '%s' "$dir"; else printf -v "$1" ''; fi
}

gpu_setup() {
  unpack_out || return 1
  G=${GPU_OUT:-gpu/out}
  EXTRA=${EXTRA_LIB:-/usr/local/nvidia/lib64}
  [[ -n ${LLVM19_DIR:-} ]] || llvm19_dir LLVM19_DIR
}
