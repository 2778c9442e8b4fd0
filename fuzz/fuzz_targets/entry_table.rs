//! Host entry tables of both layouts (clang ≤ 19's 32-byte entries, LLVM 20's 56-byte ones):
//! decoded by the function `__tgt_register_lib` uses, then registered with a mock image,
//! loaded on a mock device and unregistered. No panic; the table stays well formed; nothing
//! stays allocated or loaded after unregistration.

#![no_main]

use libfuzzer_sys::fuzz_target;
use omptarget_core::image::{decode_entry_table, entry_flags};
use omptarget_core::{Config, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockPlugin, Op};
use std::ffi::CStr;
use std::sync::Arc;

/// Name pointers are the program's strings at the C boundary; here any non-null value names
/// one of a few symbols (the mock finds every symbol).
fn name(p: usize) -> Result<&'static CStr, String> {
    const NAMES: [&CStr; 4] = [c"kernel", c"global", c"__omp_offloading_fe00_main_l1", c""];
    match p {
        0 => Err("an offload entry has no name".into()),
        p => Ok(NAMES[p % NAMES.len()]),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(entries) = decode_entry_table(data, name) else {
        return;
    };
    let v20 = data.len() >= 8 && data[..8] == [0; 8];
    let size = if v20 { 56 } else { 32 };
    // LLVM 20's entries carry their offload kind (bytes 10..12): only OpenMP's (1) are kept.
    let kept = data
        .chunks_exact(size)
        .filter(|e| !v20 || e[10..12] == [1, 0])
        .count();
    assert_eq!(entries.len(), kept);
    // Inconsistent `requires` records are fatal by design (as in LLVM): not registered here.
    let entries: Vec<_> = entries
        .into_iter()
        .filter(|e| e.flags & entry_flags::REQUIRES == 0)
        .collect();
    let plugin = MockPlugin::new(1, false, false);
    let state = plugin.state.clone();
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    rt.register(1, &[MAGIC], entries);
    if let Ok(dev) = rt.device(0) {
        dev.check_table().unwrap();
    }
    rt.unregister(1);
    assert_eq!(state.memory.live(), 0, "device memory left after unregistration");
    let log = state.log();
    let loads = log.iter().filter(|o| matches!(o, Op::Load { .. })).count();
    let unloads = log.iter().filter(|o| matches!(o, Op::Unload { .. })).count();
    assert_eq!(loads, unloads, "an image stayed loaded");
});
