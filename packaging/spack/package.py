# Spack package recipe for omptarget-rs (packaging/README.md says how to use it).
#
# The build is cargo's; the installation is the project's own `omptarget install --prefix`,
# the command a user without Spack runs, so both give the same layout: lib/libomptarget.so.19.1
# and lib/libomptarget.so.22.1 (a link to it: one runtime per process), bin/omptarget, the
# documentation under share/doc/omptarget-rs and an Lmod modulefile under share/modulefiles.
# packaging/spack/check.sh runs this recipe's install() with a stand-in `spack.package`.

import os

from spack.package import *

# The repository this recipe lives in (packaging/spack/ -> ../..), as the default source.
# OMPTARGET_RS_GIT names another clone (a URL or a path).
_here = os.path.dirname(os.path.realpath(__file__))
_repo = os.path.normpath(os.path.join(_here, "..", ".."))


class OmptargetRs(Package):
    """An OpenMP offloading runtime in Rust: a drop-in replacement for LLVM's
    libomptarget.so.19.1 (clang 19 programs) and libomptarget.so.22.1 (clang 22), with
    stream-ordered device allocation on NVIDIA GPUs and an x86_64 host device. Loading the
    package puts it first in LD_LIBRARY_PATH; `omptarget doctor PROGRAM` says which runtime
    and devices a program would get."""

    homepage = "file://" + _repo
    git = os.environ.get("OMPTARGET_RS_GIT", "file://" + _repo)

    license("Apache-2.0 WITH LLVM-exception")

    version("main", branch="main")

    variant(
        "cuda",
        default=True,
        description="NVIDIA GPUs through the CUDA driver API, loaded at run time (building "
        "needs no CUDA); ~cuda builds the host device only",
    )

    depends_on("c", type="build")  # the linker driver (tools/cc-wrapper-gcc calls cc)
    depends_on("rust@1.85:", type="build")
    depends_on("libffi", type=("build", "link", "run"))
    # Programs that use the runtime are built by clang 19 or newer and load LLVM's libomp.
    depends_on("llvm@19: +clang", type="run")

    def cargo_args(self):
        """The cargo command line of the build."""
        args = ["build", "--release", "--locked", "-p", "omptarget-abi", "-p", "omptarget-cli"]
        if self.spec.satisfies("~cuda"):
            args.append("--no-default-features")
        return args

    def install(self, spec, prefix):
        source = self.stage.source_path
        with working_dir(source):
            cargo = which("cargo", required=True)
            cargo(*self.cargo_args())
            omptarget = Executable(join_path(source, "target", "release", "omptarget"))
            omptarget("install", "--prefix", prefix)

    def setup_run_environment(self, env):
        # The runtime is chosen through LD_LIBRARY_PATH (clang's programs have no RPATH):
        # Spack's generated modules must prepend it, which Spack no longer does by default.
        env.prepend_path("LD_LIBRARY_PATH", self.prefix.lib)
        env.prepend_path("PATH", self.prefix.bin)
