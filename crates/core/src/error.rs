use std::fmt;

/// Why an operation of the runtime failed. Messages LLVM prints at the point of failure are
/// printed there (see `message`); the error carries the context back to the C boundary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A device number that names no device.
    InvalidDevice { id: i64, count: usize },
    /// A host region id with no kernel in any registered image.
    NoKernel { host_ptr: usize },
    /// No registered image can run on this device.
    NoImage { device: usize },
    /// Data required by `present` (or by the construct) is not mapped.
    NotPresent { host: usize, size: usize },
    /// A map clause names a section that extends an existing mapping.
    Extension { host: usize, size: usize },
    /// A null pointer where data is required.
    NullPointer(&'static str),
    /// A malformed image or descriptor.
    InvalidImage(String),
    /// A device operation failed.
    Device {
        device: usize,
        what: &'static str,
        source: omptarget_plugin::Error,
    },
    /// An invalid argument to an API routine.
    InvalidArgument(String),
    /// The device has no foreign runtime for interop objects (LLVM's plugins: its
    /// `initDeviceInfoImpl` is not supported).
    NoForeignRuntime { device: usize },
    /// The runtime panicked inside an entry point (a bug); the payload message.
    Internal(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidDevice { id, count } => {
                write!(
                    f,
                    "device number {id} is not valid ({count} devices available)"
                )
            }
            Error::NoKernel { host_ptr } => write!(
                f,
                "Host ptr {host_ptr:#018x} does not have a matching target pointer."
            ),
            Error::NoImage { device } => {
                write!(f, "no registered image is compatible with device {device}")
            }
            Error::NotPresent { host, size } => write!(
                f,
                "no device mapping for host address {host:#018x} ({size} bytes)"
            ),
            Error::Extension { host, size } => write!(
                f,
                "host address {host:#018x} ({size} bytes) extends an existing mapping"
            ),
            Error::NullPointer(what) => write!(f, "{what} is a null pointer"),
            Error::InvalidImage(why) => write!(f, "invalid device image: {why}"),
            Error::Device {
                device,
                what,
                source,
            } => write!(f, "{what} failed on device {device}: {source}"),
            Error::InvalidArgument(why) => f.write_str(why),
            Error::NoForeignRuntime { device } => write!(
                f,
                "device {device} offers no foreign runtime for interop objects"
            ),
            Error::Internal(why) => write!(f, "internal error: {why}"),
        }
    }
}

impl std::error::Error for Error {}

/// Attaches the device and operation to a backend error.
pub(crate) trait DeviceContext<T> {
    fn on(self, device: usize, what: &'static str) -> Result<T>;
}

impl<T> DeviceContext<T> for omptarget_plugin::Result<T> {
    fn on(self, device: usize, what: &'static str) -> Result<T> {
        self.map_err(|source| Error::Device {
            device,
            what,
            source,
        })
    }
}
