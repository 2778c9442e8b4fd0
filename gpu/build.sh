#!/usr/bin/env bash
# Builds, on this machine, everything gpu/run.sh needs on the GPU machine (which has no
# compilers): the conformance programs of tests/c for sm_90 with CUDA 12 cubins (ELF ABI v7,
# gpu/out/v7) and CUDA 13 cubins (ABI v8, gpu/out/v8), the examples and benchmarks, a manifest
# of each program's directives, LLVM 19's runtime as a bundle, our runtime, the `omptarget`
# CLI and the `omptarget-suite` harness.
#
# usage: gpu/build.sh [--target sm_90|host] [--no-cargo] [--runtime-only]
#   --target host  build for the x86_64 host device instead, into gpu/out-host (to dry-run
#                  gpu/run.sh here: GPU_OUT=gpu/out-host gpu/run.sh); v8 is then a copy of v7
#   --no-cargo     use the runtime already in target/release instead of building it
#   --runtime-only replace only the runtime, the CLI and the harness in an existing gpu/out
#                  and repack it (~1 min instead of ~15): for runtime changes when tests/,
#                  examples/, bench/ and gpu/tools/ did not change since the last full build
# env: CUDA_V7 / CUDA_V8  toolchain folders (default ~/.cache/omptarget-cuda[-abi8])
#      OFFLOAD_CC         the compiler driver (default ../shared/tools/offload-cc)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

target=sm_90
cargo_build=1
runtime_only=0
while (($#)); do
  case $1 in
    --target) target=$2; shift 2 ;;
    --no-cargo) cargo_build=0; shift ;;
    --runtime-only) runtime_only=1; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

tools=$(cd "$root/.." && pwd)/shared/tools
[[ -d $tools ]] || tools=/work/shared/tools
cc=${OFFLOAD_CC:-$tools/offload-cc}
cuda_v7=${CUDA_V7:-$HOME/.cache/omptarget-cuda}
cuda_v8=${CUDA_V8:-$HOME/.cache/omptarget-cuda-abi8}

if [[ $target == host ]]; then
  out=$root/gpu/out-host
  abis=(v7)
else
  out=$root/gpu/out
  abis=(v7 v8)
fi

# cc_for ABI: the compiler command for that ABI's toolchain
cc_for() {
  if [[ $target == host ]]; then
    echo "$cc --target host"
  elif [[ $1 == v8 ]]; then
    echo "$cc --target $target --cuda $cuda_v8"
  else
    echo "$cc --target $target --cuda $cuda_v7"
  fi
}

t0=$(date +%s)
# ---------------------------------------------------------------- compilers and LLVM 22
# What a fresh machine lacks, installed first (as scripts/examples.sh and scripts/test.sh do):
# clang-19, libomp-19-dev (the programs' compiler, LLVM 19's runtime and replay tool), clang-22
# and LLVM 22's runtime in build/llvm22 (the -foffload-via-llvm programs link -lomptarget from
# there), libffi-dev, Open MPI (gpu/mpi.sh). Without it a fresh clone failed to link
# gpu/tools/cuda_via_llvm.cu (`unable to find library -lomptarget`) and `run.sh tools` failed.
echo "== dependencies (scripts/deps.sh)"
scripts/deps.sh
# ---------------------------------------------------------------- CUDA toolchains
# Each toolchain folder is made here, with the right tools for its ABI, before anything is
# compiled: the compiler wrapper would otherwise guess the ABI from the folder's name. A folder
# whose ptxas belongs to the other CUDA major version is an error, not a silent wrong build.
toolchain() { # DIR ABI
  local dir=$1 abi=$2 want have
  if [[ ! -x $dir/bin/ptxas ]]; then
    echo "== CUDA toolchain for ABI $abi: $dir"
    if [[ $abi == v8 ]]; then "$tools/cuda-toolchain.sh" "$dir" --abi8; else "$tools/cuda-toolchain.sh" "$dir"; fi
  fi
  want=12; [[ $abi == v8 ]] && want=13
  have=$("$dir/bin/ptxas" --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\..*/\1/p' | head -n 1)
  if [[ $have != "$want" ]]; then
    echo "build.sh: $dir has ptxas of CUDA ${have:-?}, ABI $abi needs CUDA $want (remove the folder to remake it)" >&2
    exit 1
  fi
}
if [[ $target != host ]]; then
  toolchain "$cuda_v7" v7
  toolchain "$cuda_v8" v8
fi
# ---------------------------------------------------------------- our runtime
if ((cargo_build)); then
  echo "== cargo build --release -p omptarget-abi -p omptarget-cli -p omptarget-suite"
  cargo build --release -p omptarget-abi -p omptarget-cli -p omptarget-suite
fi
for f in target/release/libomptarget.so target/release/omptarget target/release/omptarget-suite; do
  [[ -f $f ]] || { echo "build.sh: $f is missing (run without --no-cargo)" >&2; exit 1; }
done

# pack_out: gpu/out itself (~61 MB) and the working tree together pass the device tool's
# 64 MiB, so the programs travel packed (~5 MB) beside the LLVM bundle, in gpu/out-pack (carry
# that; gpu/unpack.sh unpacks it there).
pack_out() {
  local pack=$root/gpu/out-pack psize limit=$((56 * 1024 * 1024))
  rm -rf "$pack"; mkdir -p "$pack"
  tar -C "$root/gpu" -cf - --exclude=out/llvm19.tar.xz "$(basename "$out")" | xz -T0 -6 > "$pack/out.tar.xz"
  ln -f "$out/llvm19.tar.xz" "$pack/llvm19.tar.xz" 2>/dev/null || cp "$out/llvm19.tar.xz" "$pack/"
  psize=$(du -sbL "$pack" | cut -f1)
  echo "== $pack: $(du -shL "$pack" | cut -f1) ($psize bytes): carry [\"gpu/out-pack\"]"
  if ((psize > limit)); then
    echo "build.sh: $pack is over 56 MiB: with the working tree it will not travel" >&2
    exit 1
  fi
}

if ((runtime_only)); then
  [[ $target != host && -f $out/manifest.tsv && -s $out/llvm19.tar.xz ]] || {
    echo "build.sh: --runtime-only needs a full sm_90 build in $out first" >&2; exit 1; }
  cp target/release/libomptarget.so "$out/ours/libomptarget.so.19.1"
  cp target/release/omptarget target/release/omptarget-suite "$out/bin/"
  strip --strip-unneeded "$out/ours/libomptarget.so.19.1"
  strip "$out/bin/omptarget" "$out/bin/omptarget-suite"
  {
    grep -v '^runtime' "$out/BUILD-INFO.txt"
    echo "runtime: $(sha256sum target/release/libomptarget.so | cut -c1-16) $(date -u -r target/release/libomptarget.so +%FT%TZ)"
    echo "runtime-only refresh: $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | wc -l) changed paths"
  } > "$out/BUILD-INFO.txt.new"
  mv "$out/BUILD-INFO.txt.new" "$out/BUILD-INFO.txt"
  pack_out
  exit 0
fi

# Fresh program folders; the LLVM bundle is kept (it takes minutes to make).
rm -rf "$out/llvm19" "$out/v7" "$out/v8" "$out/examples" "$out/bench" "$out/soak" "$out/stress" "$out/tools" "$out/expected" "$out/ours" "$out/bin" \
  "$out/manifest.tsv" "$out/compile-failures.txt" "$out/BUILD-INFO.txt"
mkdir -p "$out/ours" "$out/bin" "$out/expected" "$out/examples" "$out/bench"
for a in "${abis[@]}"; do mkdir -p "$out/$a"; done

cp target/release/libomptarget.so "$out/ours/libomptarget.so.19.1"
ln -sf libomptarget.so.19.1 "$out/ours/libomptarget.so.22.1"
# The user's CLI and the harness that runs everything (gpu/run.sh calls omptarget-suite, which
# calls the omptarget beside it for `info` and `run`).
cp target/release/omptarget target/release/omptarget-suite "$out/bin/"
strip --strip-unneeded "$out/ours/libomptarget.so.19.1"
strip "$out/bin/omptarget" "$out/bin/omptarget-suite"
# The programs need libomp.so.5 and our library needs libffi.so.8: a bare GPU machine may lack
# both, so they travel beside ours (the LLVM bundle carries its own copies).
cp -L /usr/lib/llvm-19/lib/libomp.so.5 "$out/ours/"
ffi=$(ldd target/release/libomptarget.so | awk '/libffi/ {print $3}')
[[ -n $ffi ]] && cp -L "$ffi" "$out/ours/"

# ---------------------------------------------------------------- LLVM 19 bundle
# Unpacked it is ~190 MB (libLLVM, libz3, ICU), over the 64 MiB that travels: only the .tar.xz
# travels and gpu/run.sh unpacks it on the GPU machine. The host build uses /usr/lib/llvm-19/lib.
if [[ $target != host ]]; then
  if [[ ! -s $out/llvm19.tar.xz ]]; then
    echo "== LLVM 19 bundle (a few minutes: xz)"
    "$tools/llvm19-bundle.sh" "$out/llvm19.tar.xz.part"
    mv "$out/llvm19.tar.xz.part" "$out/llvm19.tar.xz"
  else
    echo "== LLVM 19 bundle: kept $out/llvm19.tar.xz"
  fi
fi

# ---------------------------------------------------------------- directives
# Same rules as crates/abi/tests/conformance.rs (for its clang-19 build): only the leading run of `//` and blank lines.
# Prints eight tab-separated fields: env, args, flags, shared-lib, cflags, tool, status
# (`STATUS:`) and the `OURS-STDERR:` lines joined by \037 ("-" when empty). A TOOL (an OMPT
# tool library, built into bin/) adds OMP_TOOL_LIBRARIES=@TOOLS@/libNAME.so to the
# environment; gpu/run.sh puts bin/'s absolute path in place of @TOOLS@. EXTENSION (a feature
# LLVM 19 lacks) is checked as a DIVERGENCE.
# A program this clang-19 suite has nothing to run for prints SKIP.
directives() {
  awk '
    !/^\/\// && !/^[ \t\r]*$/ { exit }
    /^\/\// {
      l = $0; sub(/^(\/\/)+/, "", l); gsub(/^[ \t\r]+|[ \t\r]+$/, "", l)
      if (l ~ /^ENV:/) { r = substr(l, 5); n = split(r, kv, /[ \t]+/)
        for (i = 1; i <= n; i++) if (index(kv[i], "=") > 0) env = env (env == "" ? "" : " ") kv[i] }
      else if (l == "STDERR") stderr = 1
      else if (l ~ /^SHARED-LIB:/) { lib = substr(l, 12); gsub(/^[ \t]+|[ \t]+$/, "", lib)
        # An optional second word names the compiler that builds the library.
        n = split(lib, w, /[ \t]+/); lib = w[1]; if (n > 1) libcc = w[2] }
      else if (l ~ /^ONLY:/) { r = substr(l, 6); n = split(r, w, /[ \t]+/)
        for (i = 1; i <= n; i++) { if (w[i] ~ /^\(/) break; if (w[i] != "") only = only " " w[i] } }
      else if (l ~ /^ARGS:/) { r = substr(l, 6); gsub(/^[ \t]+|[ \t]+$/, "", r); gsub(/[ \t]+/, " ", r); args = r }
      else if (l ~ /^DIVERGENCE:/ || l ~ /^DIVERGENCE\(clang19\):/ || l ~ /^DIVERGENCE\(gpu\):/ || l ~ /^EXTENSION:/) div = 1
      else if (l ~ /^CFLAGS:/) { r = substr(l, 8); gsub(/^[ \t]+|[ \t]+$/, "", r); gsub(/[ \t]+/, " ", r); cflags = r }
      else if (l ~ /^TOOL:/) { tool = substr(l, 6); gsub(/^[ \t]+|[ \t]+$/, "", tool) }
      else if (l ~ /^GPU-UNCOMPARED:/) uncompared = 1
      else if (l ~ /^GPU-TIMEOUT-S:/) { r = substr(l, 15); gsub(/^[ \t]+/, "", r); split(r, w, /[ \t]+/); tmo = w[1] }
      else if (l ~ /^STATUS:/) { st = substr(l, 8); gsub(/^[ \t]+|[ \t]+$/, "", st) }
      else if (l ~ /^STATUS\(clang19\):/) { st19 = substr(l, 17); gsub(/^[ \t]+|[ \t]+$/, "", st19) }
      else if (l ~ /^STATUS\(gpu\):/) { stgpu = substr(l, 13); sub(/[ \t]*\(.*$/, "", stgpu); gsub(/^[ \t]+|[ \t]+$/, "", stgpu) }
      else if (l ~ /^OURS-STDERR:/) { r = substr(l, 13); gsub(/^[ \t]+|[ \t]+$/, "", r); oe = oe (oe == "" ? "" : "\037") r }
      else if (l ~ /^OURS-STDERR\(clang19\):/) { r = substr(l, 22); gsub(/^[ \t]+|[ \t]+$/, "", r); oe = oe (oe == "" ? "" : "\037") r }
    }
    END {
      # The suite is built with clang 19 here: a program limited to another compiler, or
      # whose library another compiler builds, has nothing to run.
      if ((only != "" && only !~ / clang19/) || (libcc != "" && libcc != "clang19")) {
        printf "SKIP\t-\t-\t%s\t-\t-\t-\t-\n", (lib == "" ? "-" : lib); exit }
      if (st19 != "") st = st19
      if (stgpu != "") st = stgpu
      if (tool != "") { t = tool; sub(/\.c$/, "", t); env = env (env == "" ? "" : " ") "OMP_TOOL_LIBRARIES=@TOOLS@/lib" t ".so" }
      flags = ""
      if (stderr) flags = "STDERR"
      if (div) flags = flags (flags == "" ? "" : ",") "DIVERGENCE"
      if (uncompared) flags = flags (flags == "" ? "" : ",") "GPU-UNCOMPARED"
      if (tmo != "") flags = flags (flags == "" ? "" : ",") "TIMEOUT=" tmo
      printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", (env == "" ? "-" : env), (args == "" ? "-" : args),
        (flags == "" ? "-" : flags), (lib == "" ? "-" : lib), (cflags == "" ? "-" : cflags),
        (tool == "" ? "-" : tool), (st == "" ? "-" : st), (oe == "" ? "-" : oe)
    }' "$1"
}

# ---------------------------------------------------------------- conformance programs
fails=$out/compile-failures.txt
: > "$fails"
manifest=$out/manifest.tsv
printf '# name\tenv\targs\tflags\tshared_lib\tstatus\n' > "$manifest"
nprog=0; nfail=0
compile() { # ABI LABEL cc-args...: on failure the error goes to compile-failures.txt
  local abi=$1 name=$2 log
  shift 2
  log=$(mktemp)
  if ! $(cc_for "$abi") "$@" >"$log" 2>&1; then
    { echo "== $abi $name: $(cc_for "$abi") $*"; grep -v '^$' "$log" | head -n 25; echo; } >> "$fails"
    rm -f "$log"; return 1
  fi
  rm -f "$log"
}

# A source is a shared library when a program names it in SHARED-LIB. (The cargo harness
# skips every name ending in _lib.c, which also drops the program reg_shared_lib.c.)
libs_named=" $(for s in tests/c/*.c tests/c/*.cpp; do directives "$s" | cut -f4,6; done | tr '\t' '\n' | sort -u | tr '\n' ' ')"
# OMPT tools are plain host libraries (no offloading), built once into bin/.
for t in $(for s in tests/c/*.c tests/c/*.cpp; do directives "$s" | cut -f6; done | sort -u); do
  [[ $t == - ]] && continue
  clang-19 -shared -fPIC -O1 -g0 "tests/c/$t" -o "$out/bin/lib${t%.c}.so" || { echo "== tool $t" >> "$fails"; nfail=$((nfail + 1)); }
done
echo "== conformance programs (${abis[*]}, target $target)"
for src in tests/c/*.c tests/c/*.cpp; do
  base=$(basename "$src")
  [[ $libs_named == *" $base "* ]] && continue
  # HOST-ONLY: what the program compares is a property of the host device (its allocator).
  [[ $target != host ]] && head -n 30 "$src" | grep -q '^// HOST-ONLY' && continue
  name=${base%.*}
  [[ $(directives "$src") == SKIP* ]] && continue
  IFS=$'\t' read -r env args flags lib cflags _ status ours_stderr < <(directives "$src")
  cflag_args=(); [[ $cflags != - ]] && read -r -a cflag_args <<< "$cflags"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$env" "$args" "$flags" "$lib" "$status" >> "$manifest"
  # Lines our stderr must contain (normalised), one per line, for gpu/run.sh.
  [[ $ours_stderr != - ]] && tr '\037' '\n' <<< "$ours_stderr" > "$out/expected/$name.ours-stderr"
  if [[ $flags == *DIVERGENCE* ]]; then
    if [[ -f tests/c/$name.expected ]]; then cp "tests/c/$name.expected" "$out/expected/"
    else echo "== $name: DIVERGENCE without tests/c/$name.expected" >> "$fails"; fi
  fi
  nprog=$((nprog + 1))
  for abi in "${abis[@]}"; do
    d=$out/$abi
    extra=()
    if [[ $lib != - ]]; then
      lname=${lib%.*}
      if ! compile "$abi" "$lname" "tests/c/$lib" -O1 -g0 "${cflag_args[@]}" -shared -fPIC -o "$d/lib$lname.so"; then
        nfail=$((nfail + 1)); continue
      fi
      extra=(-L"$d" -l"$lname" '-Wl,-rpath,$ORIGIN')
    fi
    compile "$abi" "$name" -O1 -g0 "${cflag_args[@]}" "$src" -o "$d/$name" "${extra[@]}" || nfail=$((nfail + 1))
  done
  printf '.'
done
echo
echo "   $nprog programs, $nfail failed compilations (${abis[*]})"

if [[ $target == host ]]; then
  # Nothing like ABI v8 on the host: a copy keeps gpu/run.sh's v8 phase exercised.
  cp -a "$out/v7" "$out/v8"
fi

# The embedded cubins must carry the intended ELF ABI: v7 is OS/ABI 0x33 version 7 (CUDA 12),
# v8 is OS/ABI 0x41 version 8 (CUDA 13).
if [[ $target != host ]]; then
  for abi in "${abis[@]}"; do
    pat='\x7fELF\x02\x01\x01\x33\x07'
    [[ $abi == v8 ]] && pat='\x7fELF\x02\x01\x01\x41\x08'
    wrong=0
    for b in "$out/$abi"/*; do
      [[ -f $b ]] || continue
      # A -fopenmp-target-jit program carries LLVM bitcode, not a cubin.
      jit=0
      for src in "tests/c/$(basename "$b")".c*; do
        [[ -f $src ]] && grep -q '^// CFLAGS:.*-fopenmp-target-jit' "$src" && jit=1
      done
      ((jit)) && continue
      LC_ALL=C grep -qaP "$pat" "$b" || { echo "   $b: no ABI $abi cubin inside"; wrong=$((wrong + 1)); }
    done
    echo "   ABI $abi cubins: $( ((wrong)) && echo "$wrong binaries without one" || echo "checked in every binary")"
    ((wrong)) && { echo "build.sh: wrong cubin ABI in $out/$abi" >&2; exit 1; }
  done
fi

# ---------------------------------------------------------------- examples and benchmarks
echo "== examples and benchmarks"
for kind in examples bench; do
  for src in "$kind"/*.c; do
    [[ -f $src ]] || continue
    name=$(basename "$src" .c)
    # On the host device the beside row's kernel is a plain target loop: host kernels that fork
    # teams inside libomp's hidden helper threads make LLVM 19's libomp abort now and then
    # (bench/gpu_scenarios.c, beside_nowait4MiB).
    host_flags=()
    [[ $target == host && $name == gpu_scenarios ]] && host_flags=(-DBESIDE_SERIAL_KERNEL)
    compile v7 "$kind/$name" -O2 -g0 "${host_flags[@]}" "$src" -o "$out/$kind/$name" || nfail=$((nfail + 1))
  done
done

# The exit and deep-copy stress programs (gpu/exit-checks.sh runs them).
mkdir -p "$out/stress"
for p in exit_with_nowait deep_copy fork_during_region; do  # exit_from_region exits inside host-device regions: host only
  compile v7 "stress/$p" -O1 -g0 "tests/stress/$p.c" -o "$out/stress/$p" || nfail=$((nfail + 1))
done
# The soak and load program (tests/soak/run.sh with SOAK_BIN=gpu/out/soak/soak).
mkdir -p "$out/soak"
compile v7 soak/soak -O2 -g0 tests/soak/soak.c -o "$out/soak/soak" || nfail=$((nfail + 1))

# Tool-interface programs (gpu/run.sh tools): gpu/tools/*.c and the record/replay kernels,
# offloading, with libdl; LLVM 19's replay tool (its libraries come with the LLVM bundle).
mkdir -p "$out/tools"
cp /usr/lib/llvm-19/bin/llvm-omp-kernel-replay "$out/tools/llvm-omp-kernel-replay-19"
for src in gpu/tools/*.c tests/record/*.c tests/profile/*.c; do
  [[ -f $src ]] || continue
  compile v7 "tools/$(basename "$src" .c)" -O2 -g0 "$src" -o "$out/tools/$(basename "$src" .c)" -ldl || nfail=$((nfail + 1))
done

# CUDA programs built with clang 22's -foffload-via-llvm (their launches reach the runtime
# through llvmLaunchKernel, with the kernel's parameter buffer): gpu/tools/*.cu. Debian's LLVM 22
# ships no NVPTX device runtime (libompdevice); these kernels need none, so an empty archive
# stands in for it. They NEED libomptarget.so.22.1: ours gets that name too (below).
if [[ $target != host ]] && command -v clang-22 >/dev/null; then
  empty=$(mktemp -d)
  ar rcs "$empty/libompdevice.a"
  for src in gpu/tools/*.cu; do
    [[ -f $src ]] || continue
    if ! clang-22 -x cuda -foffload-via-llvm --offload-arch="$target" --cuda-path="$cuda_v7" -O2 \
        -Wno-unknown-cuda-version "$src" -o "$out/tools/$(basename "$src" .cu)" \
        -L"$root/build/llvm22/lib" -Xoffload-linker -L"$empty" 2> "$out/tools/$(basename "$src" .cu).log"; then
      echo "FAILED: tools/$(basename "$src" .cu) (clang-22 -foffload-via-llvm): $(tail -n 3 "$out/tools/$(basename "$src" .cu).log")"
      { echo "== tools/$(basename "$src" .cu): clang-22 -foffload-via-llvm"; tail -n 25 "$out/tools/$(basename "$src" .cu).log"; echo; } >> "$fails"
      nfail=$((nfail + 1))
    fi
  done
  rm -rf "$empty"
fi

# Plain host tools (no offloading): bench/tools/*.c
for src in bench/tools/*.c; do
  [[ -f $src ]] || continue
  cc -O2 -pthread -o "$out/bin/$(basename "$src" .c)" "$src" || nfail=$((nfail + 1))
done

# OMPT tools for measuring OMPT's overhead (bench/ompt/*.c → bin/lib*.so; docs/OMPT.md).
for src in bench/ompt/*.c; do
  [[ -f $src ]] || continue
  clang-19 -shared -fPIC -O2 -g0 "$src" -o "$out/bin/lib$(basename "$src" .c).so" || nfail=$((nfail + 1))
done

# ---------------------------------------------------------------- GCC 12 (perf's GCC column)
# bench/gpu_scenarios.c built by GCC 12 for nvptx into gcc/, with GCC's libgomp and its nvptx
# plugin in gcc/lib (the perf mode runs it with LD_LIBRARY_PATH=gcc/lib:<driver's folder>).
# GCC 12's nvptx backend knows -misa up to sm_80 (its -march-map=sm_90 maps to sm_80): PTX 7.0
# for sm_80, which the driver JIT-compiles for the H200's sm_90; libgomp's own device library
# is sm_30 PTX 6.0. libgomp runs target regions on the host without a word when it cannot
# offload, so the perf mode reads a GOMP_DEBUG=1 run for the plugin's kernel launches. The
# --target host build is the same binary: it falls back to the host here, as it should.
rm -rf "$out/gcc"
gcc_pkgs=()
command -v gcc-12 >/dev/null || gcc_pkgs+=(gcc-12)
[[ -x /usr/lib/gcc/x86_64-linux-gnu/12/accel/nvptx-none/mkoffload ]] || gcc_pkgs+=(gcc-12-offload-nvptx)
[[ -f /usr/lib/x86_64-linux-gnu/libgomp-plugin-nvptx.so.1 ]] || gcc_pkgs+=(libgomp-plugin-nvptx1)
if ((${#gcc_pkgs[@]})); then
  echo "== installing ${gcc_pkgs[*]} (apt-get)"
  gcc_sudo=; [[ $(id -u) == 0 ]] || gcc_sudo=sudo
  { $gcc_sudo apt-get update -qq && $gcc_sudo apt-get install -y -qq "${gcc_pkgs[@]}" >/dev/null; } ||
    echo "build.sh: apt-get install ${gcc_pkgs[*]} failed" >&2
fi
echo "== GCC 12: bench/gpu_scenarios.c for nvptx (-misa=sm_80), libgomp and its nvptx plugin"
mkdir -p "$out/gcc/lib"
gcc_flags=(-O2 -g0 -fopenmp -foffload=nvptx-none -foffload-options=-misa=sm_80)
gcc_log=$(mktemp)
if gcc-12 "${gcc_flags[@]}" bench/gpu_scenarios.c -o "$out/gcc/gpu_scenarios" >"$gcc_log" 2>&1 &&
    LC_ALL=C grep -qa '^\.target sm_80' "$out/gcc/gpu_scenarios" &&
    cp -L /usr/lib/x86_64-linux-gnu/libgomp.so.1 /usr/lib/x86_64-linux-gnu/libgomp-plugin-nvptx.so.1 "$out/gcc/lib/"; then
  printf '%s\nflags: %s\n' "$(gcc-12 --version | head -n 1)" "${gcc_flags[*]}" > "$out/gcc/BUILD-INFO.txt"
  echo "   gcc/gpu_scenarios (sm_80 PTX inside), gcc/lib: $(cd "$out/gcc/lib" && echo *)"
else
  { echo "== gcc/gpu_scenarios: gcc-12 ${gcc_flags[*]} (or no sm_80 PTX inside, or no libgomp to copy)"
    grep -v '^$' "$gcc_log" | head -n 25; echo; } >> "$fails"
  nfail=$((nfail + 1))
  rm -rf "$out/gcc"
fi
rm -f "$gcc_log"

# ---------------------------------------------------------------- MPI (gpu/mpi.sh)
if [[ $target != host ]] && command -v mpicc >/dev/null; then
  echo "== MPI example and Open MPI bundle"
  GPU_OUT=$out OFFLOAD_CC=$cc CUDA_V7=$cuda_v7 gpu/mpi.sh build | tail -n 1
fi

# ---------------------------------------------------------------- info and size
{
  echo "built: $(date -u +%FT%TZ) on $(hostname)"
  echo "target: $target"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | wc -l) changed paths"
  if [[ $target != host ]]; then
    echo "v7 toolchain: $cuda_v7 $(tr -d '\n' < "$cuda_v7/version.json" 2>/dev/null | head -c 200)"
    echo "v8 toolchain: $cuda_v8 $(tr -d '\n' < "$cuda_v8/version.json" 2>/dev/null | head -c 200)"
  fi
  echo "runtime: $(sha256sum target/release/libomptarget.so | cut -c1-16) $(date -u -r target/release/libomptarget.so +%FT%TZ)"
  echo "clang: $(clang-19 --version | head -n 1)"
} > "$out/BUILD-INFO.txt"

if [[ -s $fails ]]; then
  echo "== compile failures ($fails):"
  grep '^== ' "$fails"
else
  echo "== no compile failures"
fi
size=$(du -sb "$out" | cut -f1)
echo "== $out: $(du -sh "$out" | cut -f1) ($size bytes) in $(($(date +%s) - t0)) s"
du -sh "$out"/* | sort -h | tail -n 6 | sed 's/^/   /'
if [[ $target != host ]]; then
  pack_out
fi
