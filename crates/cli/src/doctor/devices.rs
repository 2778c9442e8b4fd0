//! The devices our runtime sees in this environment (its plugins, built as the library builds
//! them, from the same variables), why a GPU is missing, which device can run each of a
//! program's images, and whether its `requires unified_shared_memory` can be met.

use super::Report;
use super::program::{Entries, Image, Program};
use omptarget::default_plugins;
use omptarget_core::Config;
use omptarget_core::plugin::{ImageInfo, Plugin};
use std::path::Path;
use std::sync::Arc;

/// The `requires unified_shared_memory` flag.
const USM: u64 = 0x8;

/// `OMP_TARGET_OFFLOAD`, as libomp reads it (case-insensitive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Offload {
    Default,
    Mandatory,
    Disabled,
}

fn offload() -> Offload {
    match std::env::var("OMP_TARGET_OFFLOAD")
        .unwrap_or_default()
        .to_ascii_lowercase()
        .as_str()
    {
        "mandatory" => Offload::Mandatory,
        "disabled" => Offload::Disabled,
        _ => Offload::Default,
    }
}

/// What the program is: its compiler's entry table, its images, its requirements.
pub fn describe_program(report: &mut Report, prog: &Program) {
    if let Some(e) = &prog.image_error {
        report.problem(
            format!("its device code (.llvm.offloading) cannot be read: {e}"),
            "rebuild the program with the clang that built the rest of it",
        );
    }
    let compiler = match prog.entries {
        Some(Entries::Clang19) => "clang ≤ 19's offload entries",
        Some(Entries::Clang20) => "clang ≥ 20's offload entries",
        None => "no offload entry table",
    };
    let images: Vec<String> = prog.images.iter().map(Image::describe).collect();
    if images.is_empty() {
        if prog.needed.iter().any(|n| n.starts_with("libomptarget.so")) {
            report.problem(
                format!(
                    "{compiler}, but no device image: every target region runs on the host (built without -fopenmp-targets=...)"
                ),
                "rebuild with -fopenmp-targets=x86_64-pc-linux-gnu (host device) or --offload-arch=sm_90 (NVIDIA GPU)",
            );
        }
    } else {
        report.ok(format!(
            "{compiler}; {} device image{}: {}",
            images.len(),
            if images.len() == 1 { "" } else { "s" },
            images.join(", ")
        ));
    }
    if prog.requires & USM != 0 {
        report.note("it requires unified_shared_memory (#pragma omp requires): every device it uses must reach host memory (see devices)");
    }
}

/// The devices, and for `program` which of them can run its images.
pub fn check(report: &mut Report, program: Option<&Program>) {
    let mode = offload();
    let config = Config::from_env();
    let plugins = default_plugins(&config);
    if mode == Offload::Disabled {
        report.problem(
            "OMP_TARGET_OFFLOAD=DISABLED: the runtime offers no device and every target region runs on the host",
            "unset OMP_TARGET_OFFLOAD",
        );
    }
    let mut total = 0;
    for p in &plugins {
        let n = p.number_of_devices();
        let names = device_names(p.as_ref(), n);
        let first = total;
        total += n;
        if n > 0 && mode == Offload::Disabled {
            report.note(format!(
                "plugin {}: {n} device{}{names}, none offered while OMP_TARGET_OFFLOAD=DISABLED",
                p.name(),
                if n == 1 { "" } else { "s" },
            ));
        } else if n > 0 {
            report.ok(format!(
                "plugin {}: {n} device{} ({}{})",
                p.name(),
                if n == 1 { "" } else { "s" },
                if n == 1 {
                    format!("device {first}")
                } else {
                    format!("devices {first}-{}", total - 1)
                },
                names
            ));
        }
    }
    let gpu = gpu_state(&plugins);
    match &gpu {
        Gpu::Present => {}
        Gpu::Missing(why) => report.note(format!("no NVIDIA GPU: {why}")),
        Gpu::Disabled => {
            report.note("the CUDA plugin is switched off (OMPTARGET_RS_DISABLE_CUDA_PLUGIN)")
        }
        Gpu::NotBuilt => report.note(
            "this build has no CUDA plugin (built without the `cuda` feature, Spack's ~cuda)",
        ),
    }
    if config.disable_host_plugin {
        report.note("the host device plugin is switched off (OMPTARGET_DISABLE_HOST_PLUGIN)");
    }
    if total == 0 && mode != Offload::Disabled {
        report.note("omptarget-rs sees no device: target regions run on the host");
    }
    if mode == Offload::Mandatory {
        report.note("OMP_TARGET_OFFLOAD=MANDATORY: a target region that cannot run on a device stops the program");
    }
    let Some(prog) = program else { return };
    if mode == Offload::Disabled {
        return;
    }
    let mut usable = Vec::new();
    for image in &prog.images {
        let info = ImageInfo {
            bytes: &image.bytes,
            triple: image.triple.as_deref(),
            arch: image.arch.as_deref(),
        };
        let runs_on: Vec<&Arc<dyn Plugin>> =
            plugins.iter().filter(|p| p.is_compatible(&info)).collect();
        if !runs_on.is_empty() {
            let names: Vec<&str> = runs_on.iter().map(|p| p.name()).collect();
            report.ok(format!(
                "its {} image runs on the {} plugin's devices",
                image.describe(),
                names.join(" and ")
            ));
            usable.extend(runs_on.into_iter().cloned());
            continue;
        }
        let consequence = if mode == Offload::Mandatory {
            "the program stops at its first target region (OMP_TARGET_OFFLOAD=MANDATORY)"
        } else {
            "its target regions run on the host instead"
        };
        let why_not = plugins.iter().find_map(|p| p.incompatibility(&info));
        if let Some(why) = why_not {
            let arch = plugins
                .iter()
                .find(|p| p.name() == "cuda")
                .and_then(|p| cuda_arch(p.as_ref()));
            report.problem(
                format!("its {} image cannot run here: {why}", image.describe()),
                format!(
                    "rebuild with --offload-arch={}",
                    arch.unwrap_or_else(|| "<this GPU's sm_XX>".into())
                ),
            );
        } else if image.is_nvidia() {
            let (why, fix) = match &gpu {
                Gpu::Missing(why) => (why.clone(), no_gpu_fix()),
                Gpu::Disabled => (
                    "the CUDA plugin is switched off (OMPTARGET_RS_DISABLE_CUDA_PLUGIN)".into(),
                    "unset OMPTARGET_RS_DISABLE_CUDA_PLUGIN".into(),
                ),
                Gpu::NotBuilt => (
                    "this build of omptarget-rs has no CUDA plugin".into(),
                    "build omptarget-rs with its default features (Spack: omptarget-rs+cuda)"
                        .into(),
                ),
                Gpu::Present => (
                    "no GPU of this machine accepts it".into(),
                    "rebuild for this machine's GPU (--offload-arch=sm_XX)".into(),
                ),
            };
            report.problem(
                format!(
                    "it is built for an NVIDIA GPU ({}), but there is none: {why}; {consequence}",
                    image.describe()
                ),
                fix,
            );
        } else if image.is_x86_64() && config.disable_host_plugin {
            report.problem(
                format!(
                    "its {} image needs the host device, which is switched off; {consequence}",
                    image.describe()
                ),
                "unset OMPTARGET_DISABLE_HOST_PLUGIN",
            );
        } else {
            report.problem(
                format!("omptarget-rs has no device for its {} image; {consequence}", image.describe()),
                "rebuild with -fopenmp-targets=x86_64-pc-linux-gnu or --offload-arch=sm_90 (the targets omptarget-rs runs)",
            );
        }
    }
    if prog.requires & USM != 0 {
        unified_shared_memory(report, &usable);
    }
}

/// Whether each device that runs the program's images can use host addresses.
fn unified_shared_memory(report: &mut Report, usable: &[Arc<dyn Plugin>]) {
    if usable.is_empty() {
        report.note("unified_shared_memory: no device runs the program here, so nothing to meet");
        return;
    }
    for p in usable {
        let n = p.number_of_devices();
        let mut met = 0;
        for i in 0..n {
            match p.init_device(i).map(|d| d.unified_shared_memory()) {
                Ok(Ok(())) => met += 1,
                Ok(Err(why)) => report.problem(
                    format!("unified_shared_memory cannot be met: {why}; registering the program fails"),
                    "run on a GPU whose driver gives it host memory (HMM, or ATS on Grace Hopper), or drop `#pragma omp requires unified_shared_memory` and map the data",
                ),
                Err(e) => report.problem(
                    format!("{} device {i} does not start: {e}", p.name()),
                    "check the device with nvidia-smi; see docs/GPU.md",
                ),
            }
        }
        if met == n {
            report.ok(format!(
                "unified_shared_memory can be met: the {} plugin's {n} device{} reach host memory",
                p.name(),
                if n == 1 { "" } else { "s" }
            ));
        }
    }
}

/// Whether a GPU is there for our runtime, and why not.
enum Gpu {
    Present,
    Missing(String),
    Disabled,
    NotBuilt,
}

fn gpu_state(plugins: &[Arc<dyn Plugin>]) -> Gpu {
    if let Some(cuda) = plugins.iter().find(|p| p.name() == "cuda") {
        if cuda.number_of_devices() > 0 {
            return Gpu::Present;
        }
        return Gpu::Missing(why_no_gpu());
    }
    if cfg!(feature = "cuda") {
        Gpu::Disabled
    } else {
        Gpu::NotBuilt
    }
}

#[cfg(feature = "cuda")]
pub(crate) fn why_no_gpu() -> String {
    omptarget_plugin_cuda::why_no_devices()
        .unwrap_or_else(|| "the CUDA plugin reports no device".into())
}

#[cfg(not(feature = "cuda"))]
pub(crate) fn why_no_gpu() -> String {
    "this build has no CUDA plugin".into()
}

/// The fix for a GPU program on a machine without a usable GPU.
fn no_gpu_fix() -> String {
    let driver = Path::new("/usr/local/nvidia/lib64/libcuda.so.1");
    if driver.exists() {
        "export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/nvidia/lib64   (the driver's folder, after ours)".into()
    } else if Path::new("/proc/driver/nvidia").exists() {
        "put the folder holding libcuda.so.1 in LD_LIBRARY_PATH, after ours (find it: ldconfig -p | grep libcuda)".into()
    } else {
        "run it on a machine with an NVIDIA GPU and its driver (or add -fopenmp-targets=x86_64-pc-linux-gnu to use the host device here)".into()
    }
}

/// `sm_XX` of the first CUDA device, from its properties.
fn cuda_arch(p: &dyn Plugin) -> Option<String> {
    let dev = p.init_device(0).ok()?;
    dev.info()
        .properties
        .into_iter()
        .find(|(k, _)| k == "Compute capability")
        .and_then(|(_, v)| {
            // "9.0 (sm_90)"
            let at = v.find("(sm_")? + 1;
            Some(v[at..].trim_end_matches(')').to_owned())
        })
}

/// ": NAME" of the first device (", ..." when there are more).
fn device_names(p: &dyn Plugin, n: usize) -> String {
    match p.init_device(0) {
        Ok(d) if n > 0 => format!(": {}{}", d.info().name, if n > 1 { ", ..." } else { "" }),
        _ => String::new(),
    }
}
