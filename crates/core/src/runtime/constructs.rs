//! The constructs, run by the runtime: it hands them what they read of it
//! ([`Constructs`]) and answers their questions about the registry ([`Registry`]).

use super::Runtime;
use crate::device::Device;
use crate::error::Result;
use crate::image::Abi;
use crate::ops::{AsyncInfo, Constructs, MapArgs, Registry};
use crate::trace::SourceLoc;
use omptarget_plugin::LaunchConfig;

impl Registry for Runtime {
    fn abi_at(&self, addr: usize) -> Abi {
        Runtime::abi_at(self, addr)
    }
}

impl Runtime {
    /// The constructs, reading this runtime's configuration, requirements and info level.
    #[inline]
    pub fn constructs(&self) -> Constructs<'_> {
        Constructs::new(&self.config, &self.requirements, &self.info, self)
    }

    /// `target data` / `target enter data` ([`Constructs::data_begin`]).
    #[inline]
    pub fn data_begin(
        &self,
        dev: &Device,
        args: &mut MapArgs<'_>,
        ai: &mut AsyncInfo,
    ) -> Result<()> {
        self.constructs().data_begin(dev, args, ai)
    }

    /// The end of `target data` / `target exit data` ([`Constructs::data_end`]).
    #[inline]
    pub fn data_end(&self, dev: &Device, args: &MapArgs<'_>, ai: &mut AsyncInfo) -> Result<()> {
        self.constructs().data_end(dev, args, ai)
    }

    /// `target update` ([`Constructs::data_update`]).
    #[inline]
    pub fn data_update(&self, dev: &Device, args: &MapArgs<'_>, ai: &mut AsyncInfo) -> Result<()> {
        self.constructs().data_update(dev, args, ai)
    }

    /// A target region ([`Constructs::target`]).
    #[inline]
    pub fn target(
        &self,
        dev: &Device,
        host_ptr: usize,
        args: &mut MapArgs<'_>,
        config: &LaunchConfig,
        loc: &SourceLoc,
        ai: &mut AsyncInfo,
    ) -> Result<()> {
        self.constructs()
            .target(dev, host_ptr, args, config, loc, ai)
    }
}
