#!/usr/bin/env bash
# Runs package.py's install() as Spack would, without Spack (not installable here): a
# stand-in `spack.package` module gives the directives and the build helpers, the recipe
# builds with cargo in this checkout and installs into a temporary prefix, and a clang-19
# program then runs from that prefix with the run environment the recipe declares, and
# nothing else. Checks the directives too (the cuda variant, on by default).
#
# usage: packaging/spack/check.sh [+cuda|~cuda]...   (default: +cuda)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
variants=("$@"); ((${#variants[@]})) || variants=(+cuda)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/spack"
: > "$work/spack/__init__.py"
cat > "$work/spack/package.py" <<'PY'
"""A stand-in for the part of spack.package the recipe uses."""
import os, subprocess
DIRECTIVES = []
def _directive(name):
    def record(*args, **kwargs):
        DIRECTIVES.append((name, args, kwargs))
    return record
version, variant, depends_on, license, maintainers = (
    _directive(n) for n in ("version", "variant", "depends_on", "license", "maintainers"))
class Executable:
    def __init__(self, path):
        self.path = path
    def __call__(self, *args):
        print("+", self.path, *args, flush=True)
        subprocess.run([self.path, *args], check=True)
def which(name, required=False):
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d, name)
        if os.access(p, os.X_OK):
            return Executable(p)
    if required:
        raise RuntimeError(f"{name} not found")
    return None
def join_path(*parts):
    return os.path.join(*parts)
class working_dir:
    def __init__(self, path):
        self.path = path
    def __enter__(self):
        self.old = os.getcwd(); os.chdir(self.path)
    def __exit__(self, *exc):
        os.chdir(self.old)
class Prefix(str):
    @property
    def lib(self): return Prefix(os.path.join(self, "lib"))
    @property
    def bin(self): return Prefix(os.path.join(self, "bin"))
class Spec:
    def __init__(self, variants):
        self.variants = variants
    def satisfies(self, constraint):
        return constraint in self.variants
class Stage:
    def __init__(self, path):
        self.source_path = path
class Env:
    def __init__(self):
        self.ops = []
    def prepend_path(self, name, value):
        self.ops.append((name, str(value)))
class Package:
    def __init__(self, spec, prefix, source):
        self.spec, self.prefix, self.stage = spec, Prefix(prefix), Stage(source)
PY
cat > "$work/run.py" <<'PY'
import importlib.util, os, shlex, sys
root, prefix, variant = sys.argv[1:4]
spec = importlib.util.spec_from_file_location("recipe", os.path.join(root, "packaging/spack/package.py"))
recipe = importlib.util.module_from_spec(spec); spec.loader.exec_module(recipe)
from spack.package import DIRECTIVES, Env, Spec
variants = {args[0]: kw for name, args, kw in DIRECTIVES if name == "variant"}
assert variants["cuda"]["default"] is True, variants
deps = [args[0] for name, args, kw in DIRECTIVES if name == "depends_on"]
assert any(d.startswith("rust") for d in deps) and "libffi" in deps and any(d.startswith("llvm@19:") for d in deps), deps
pkg = recipe.OmptargetRs(Spec({variant}), prefix, root)
pkg.install(pkg.spec, pkg.prefix)
env = Env(); pkg.setup_run_environment(env)
# The run environment, as shell assignments, for the caller.
for name, value in env.ops:
    print(f"RUNENV {name}={shlex.quote(value)}")
PY
for v in "${variants[@]}"; do
  prefix=$work/prefix$v
  echo "== recipe install() $v into $prefix"
  PYTHONPATH=$work python3 "$work/run.py" "$root" "$prefix" "$v" | tee "$work/log"
  ld_path=$(sed -n "s/^RUNENV LD_LIBRARY_PATH=//p" "$work/log" | tr -d "'")
  [[ $ld_path == "$prefix/lib" ]] || { echo "check.sh: the recipe's run environment prepends LD_LIBRARY_PATH=$ld_path" >&2; exit 1; }
  [[ -f $prefix/lib/libomptarget.so.19.1 && -L $prefix/lib/libomptarget.so.22.1 ]]
  [[ -x $prefix/bin/omptarget && -f $prefix/share/doc/omptarget-rs/README.md ]]
  ls "$prefix"/share/modulefiles/omptarget-rs/*.lua > /dev/null
  clang-19 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 examples/saxpy.c -o "$work/saxpy"
  out=$(env -u OMP_TARGET_OFFLOAD LD_LIBRARY_PATH="$ld_path" LD_DEBUG=files "$work/saxpy" 2> "$work/err")
  echo "$out"
  grep -q "check: OK" <<< "$out"
  grep -q "calling init: $prefix/lib/libomptarget.so.19.1" "$work/err" || { echo "check.sh: the program did not load $prefix/lib/libomptarget.so.19.1" >&2; exit 1; }
  plugins=$(LD_LIBRARY_PATH="$ld_path" "$prefix/bin/omptarget" info | grep '^plugin' || true)
  echo "$plugins"
  if [[ $v == ~cuda ]]; then
    ! grep -q '^plugin cuda' <<< "$plugins" || { echo "check.sh: ~cuda has a CUDA plugin" >&2; exit 1; }
  else
    grep -q '^plugin cuda' <<< "$plugins" || { echo "check.sh: +cuda has no CUDA plugin" >&2; exit 1; }
  fi
  echo "== $v: ok"
done
