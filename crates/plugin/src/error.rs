use std::fmt;

/// What went wrong, in categories callers act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The device has no memory left for the request.
    OutOfMemory,
    /// The image cannot be used by this backend or device.
    InvalidImage,
    /// A symbol is missing from a loaded image.
    SymbolNotFound,
    /// A bad argument (null pointer, unknown handle).
    InvalidArgument,
    /// The driver or the system failed.
    Backend,
    /// A fault injected by a test backend.
    Injected,
    /// The backend does not offer this operation.
    Unsupported,
}

/// An error from a backend, with enough context to print without more.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
