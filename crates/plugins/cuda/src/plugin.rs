//! The plugin: probes the driver for GPUs and opens a `CudaDevice` for each.

use crate::config::CudaConfig;
use crate::device::CudaDevice;
use crate::driver::{self, CUdevice, attribute, call};
use crate::image::{self, ImageKind};
use cudarc::driver::sys;
use omptarget_plugin::{Device, Error, ErrorKind, ImageInfo, Plugin, Result};

/// The CUDA plugin: one device per visible GPU.
pub struct CudaPlugin {
    config: CudaConfig,
    /// Compute capability (`major * 10 + minor`) of each device.
    archs: Vec<u32>,
}

impl CudaPlugin {
    /// Probes the driver; any failure means 0 devices, without output.
    pub fn new(config: CudaConfig) -> Self {
        let archs = probe().unwrap_or_default();
        Self { config, archs }
    }
}

/// Why the plugin sees no GPU on this machine, in words for a user, or `None` when it sees
/// some (the plugin itself stays quiet about it; `omptarget doctor` says it).
pub fn why_no_devices() -> Option<String> {
    if !driver::driver_present() {
        return Some(
            "the NVIDIA driver's library libcuda.so.1 cannot be loaded (no NVIDIA driver here, or its folder is not on the loader's path)"
                .into(),
        );
    }
    match probe() {
        Ok(archs) if archs.is_empty() => Some(
            "the CUDA driver is loaded but reports no GPU (none visible to this process: CUDA_VISIBLE_DEVICES, or the container)".into(),
        ),
        Ok(_) => None,
        Err(e) => Some(format!("the CUDA driver is loaded but does not start: {e}")),
    }
}

fn probe() -> Result<Vec<u32>> {
    if !driver::driver_present() {
        return Ok(Vec::new());
    }
    // SAFETY: plain driver calls writing to locals.
    call("cuInit", || unsafe { sys::cuInit(0) })?;
    let mut count = 0;
    call("cuDeviceGetCount", || unsafe {
        sys::cuDeviceGetCount(&mut count)
    })?;
    let mut archs = Vec::new();
    for i in 0..count {
        let mut dev: CUdevice = 0;
        call("cuDeviceGet", || unsafe { sys::cuDeviceGet(&mut dev, i) })?;
        let major = attribute(
            dev,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        )?;
        let minor = attribute(
            dev,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        )?;
        archs.push((major * 10 + minor) as u32);
    }
    Ok(archs)
}

impl Plugin for CudaPlugin {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn number_of_devices(&self) -> usize {
        self.archs.len()
    }

    fn is_compatible(&self, image: &ImageInfo<'_>) -> bool {
        if image.triple.is_some_and(|t| !t.starts_with("nvptx")) {
            return false;
        }
        match image::classify(image.bytes) {
            Some(ImageKind::Cubin { sm, .. }) => self.archs.iter().any(|&d| image::runs_on(sm, d)),
            Some(ImageKind::Ptx | ImageKind::Fatbin) => !self.archs.is_empty(),
            None => false,
        }
    }

    fn incompatibility(&self, image: &ImageInfo<'_>) -> Option<String> {
        match image::classify(image.bytes) {
            Some(ImageKind::Cubin { sm, .. })
                if !self.archs.is_empty() && !self.archs.iter().any(|&d| image::runs_on(sm, d)) =>
            {
                let devices: Vec<String> = self.archs.iter().map(|a| format!("sm_{a}")).collect();
                Some(format!(
                    "the CUDA image is built for sm_{sm}, which cannot run on this machine's GPUs ({}); the program's target regions run on the host unless offloading is mandatory",
                    devices.join(", ")
                ))
            }
            _ => None,
        }
    }

    fn init_device(&self, index: usize) -> Result<Box<dyn Device>> {
        let arch = *self.archs.get(index).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidArgument,
                format!("no CUDA device {index}"),
            )
        })?;
        CudaDevice::new(index, arch, &self.config).map(|d| Box::new(d) as Box<dyn Device>)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cubin header for `sm_<sm>` (ELF ABI 7: the SM in the flags' low byte).
    fn cubin(sm: u32) -> Vec<u8> {
        image::tests::cubin(7, sm | (sm << 16))
    }

    fn info(b: &[u8]) -> ImageInfo<'_> {
        ImageInfo {
            bytes: b,
            triple: Some("nvptx64-nvidia-cuda"),
            arch: None,
        }
    }

    #[test]
    fn images_for_another_architecture_are_explained() {
        let plugin = CudaPlugin {
            config: CudaConfig::default(),
            archs: vec![90],
        };
        assert!(plugin.is_compatible(&info(&cubin(90))));
        assert!(plugin.incompatibility(&info(&cubin(90))).is_none());
        let sm80 = cubin(80);
        assert!(!plugin.is_compatible(&info(&sm80)));
        let why = plugin
            .incompatibility(&info(&sm80))
            .expect("an explanation");
        assert!(why.contains("sm_80") && why.contains("sm_90"), "{why}");
        // Without a GPU the plugin says nothing and accepts nothing.
        let none = CudaPlugin {
            config: CudaConfig::default(),
            archs: Vec::new(),
        };
        assert!(!none.is_compatible(&info(&sm80)));
        assert!(none.incompatibility(&info(&sm80)).is_none());
        assert_eq!(none.number_of_devices(), 0);
    }

    #[test]
    fn without_a_driver_there_are_no_devices_and_no_output() {
        // On machines without libcuda (CI) this is the real probe; with a GPU it finds it.
        let plugin = CudaPlugin::new(CudaConfig::default());
        if !driver::driver_present() {
            assert_eq!(plugin.number_of_devices(), 0);
        }
    }
}
