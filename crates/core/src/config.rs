//! Configuration read once from the environment. The README lists every variable with its
//! default.

use std::env;

/// `LIBOMPTARGET_INFO` bits.
pub mod info {
    pub const KERNEL_ARGS: u32 = 0x01;
    pub const MAPPING_EXISTS: u32 = 0x02;
    pub const DUMP_TABLE: u32 = 0x04;
    pub const MAPPING_CHANGED: u32 = 0x08;
    pub const KERNEL_GEOMETRY: u32 = 0x10;
    pub const DATA_TRANSFER: u32 = 0x20;
    /// List items without a device counterpart (LLVM's `OMP_INFOTYPE_EMPTY_MAPPING`).
    pub const EMPTY_MAPPING: u32 = 0x40;
}

#[derive(Clone, Debug)]
pub struct Config {
    /// `LIBOMPTARGET_INFO` (bit mask, default 0).
    pub info: u32,
    /// `LIBOMPTARGET_DEBUG` (level, default 0): our own trace lines on stderr.
    pub debug: u32,
    /// `LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD` (bytes, default 8 KiB; 0 disables).
    pub memory_manager_threshold: usize,
    /// `LIBOMPTARGET_MAP_FORCE_ATOMIC` (default true).
    pub map_force_atomic: bool,
    /// `OMPTARGET_RS_DEFERRED_COMPLETION` (default true): data constructs whose remaining
    /// device work no longer involves host memory return before it completes
    /// (docs/ARCHITECTURE.md, "Deferred completion").
    pub deferred_completion: bool,
    /// `LIBOMPTARGET_NUM_INITIAL_STREAMS` (default 1).
    pub num_initial_streams: usize,
    /// `OMPTARGET_DISABLE_HOST_PLUGIN` (default false).
    pub disable_host_plugin: bool,
    /// `OMP_NUM_TEAMS` (0 = unset).
    pub num_teams: i32,
    /// `OMP_TEAMS_THREAD_LIMIT` (0 = unset).
    pub teams_thread_limit: i32,
    /// `LIBOMPTARGET_SHARED_MEMORY_SIZE` (bytes of dynamic shared memory each GPU kernel gets
    /// at least, 0 = what the launch asks).
    pub shared_memory_size: u32,
    /// `LIBOMPTARGET_DEVICE_RTL_DEBUG` (the device runtime's debug kinds, 0 = none).
    pub device_rtl_debug: u32,
    /// `LIBOMPTARGET_STACK_SIZE` (bytes, 0 = device default).
    pub stack_size: usize,
    /// `LIBOMPTARGET_HEAP_SIZE` (bytes, 0 = device default).
    pub heap_size: usize,
    /// `LIBOMPTARGET_PROFILE` (file name for a profile, unset = none).
    pub profile: Option<String>,
    /// `LIBOMPTARGET_PROFILE_GRANULARITY` (µs, default 500 as LLVM): shorter host events are
    /// left out of the profile.
    pub profile_granularity_us: u64,
    /// `OMPTARGET_RS_PROFILE_SUMMARY` (file name): the profile's summary table (tab-separated).
    pub profile_summary: Option<String>,
    /// `LIBOMPTARGET_RECORD` (default false): record every kernel launch (LLVM 19's
    /// record/replay files, `record.rs`).
    pub record: bool,
    /// `LIBOMPTARGET_RR_SAVE_OUTPUT` (default false): also save the device memory after each
    /// recorded kernel (`NAME.original.output`).
    pub record_save_output: bool,
    /// `LIBOMPTARGET_RR_DEVMEM_SIZE` (GiB, as LLVM 18 read it; LLVM 19 ignores it): the device
    /// memory reserved for recording (default: as much as the device gives).
    pub record_memory_gib: Option<u64>,
    /// `OMPTARGET_RS_CUDA_POOL_RELEASE_THRESHOLD` (bytes the CUDA memory pool keeps cached
    /// across synchronisations; default `None`: a quarter of the device's memory).
    pub cuda_pool_release_threshold: Option<u64>,
    /// `OMPTARGET_RS_CUDA_POOL_IDLE_MS` (default 1000; 0: never): idle time after which the
    /// CUDA memory pool gives its cached memory back to the device.
    pub cuda_pool_idle_ms: u64,
    /// `OMPTARGET_RS_CUDA_POOL_LOW_WATER` (bytes; default `None`: 1/32 of the device, at
    /// least 1 GiB; 0: never): below this much free device memory the pool gives back what no
    /// allocation uses.
    pub cuda_pool_low_water: Option<u64>,
    /// `OMPTARGET_RS_CUDA_OOM_WAIT_MS` (default 3000; 0: fail at once): how long a CUDA
    /// allocation that found the device full waits for other processes to give memory back.
    pub cuda_oom_wait_ms: u64,
    /// `OMPTARGET_RS_CUDA_MEMORY_POOL` (default true): stream-ordered allocation on CUDA.
    pub cuda_memory_pool: bool,
    /// `OMPTARGET_RS_DISABLE_CUDA_PLUGIN` (default false).
    pub disable_cuda_plugin: bool,
    /// `OMPTARGET_RS_CUDA_BLOCKING_SYNC` (default false; LLVM's behaviour when true): an
    /// inactive primary context gets `CU_CTX_SCHED_BLOCKING_SYNC`.
    pub cuda_blocking_sync: bool,
    /// `OMPTARGET_RS_CUDA_SPIN_US` (default 1000; 0: sleep at once; -1, `None`: the driver's
    /// synchronisation): the longest a wait for a GPU polls before it sleeps.
    pub cuda_spin_us: Option<u64>,
    /// `OMPTARGET_RS_CUDA_PACK_COPIES` (default true): small staged copies share a pinned
    /// arena per stream.
    pub cuda_pack_copies: bool,
    /// `OMPTARGET_RS_CUDA_STREAMING_STORES` (default true): the host side of large staged
    /// copies stores past the caches.
    pub cuda_streaming_stores: bool,
    /// `OMPTARGET_RS_CUDA_STREAMING_MIN` (bytes, default 8 MiB): the smallest staged copy
    /// whose host side stores past the caches (with `cuda_streaming_stores`).
    pub cuda_streaming_min: usize,
    /// `OMPTARGET_RS_CUDA_POOL_PREALLOCATE` (bytes, default 256 MiB; 0 disables): the CUDA
    /// memory pool is grown by this much when the device initialises, then trimmed to
    /// `cuda_pool_idle_keep`.
    pub cuda_pool_preallocate: usize,
    /// `OMPTARGET_RS_CUDA_POOL_IDLE_KEEP` (bytes, default 0): what the CUDA memory pool keeps
    /// while idle (after its idle trim, and from initialisation on); an idle pool that keeps
    /// something reads the device's free memory once a second to give it back under pressure.
    pub cuda_pool_idle_keep: u64,
    /// `OMPTARGET_RS_CUDA_RECORD_VA` (an address, default 0x600000000000; 0: wherever the
    /// driver puts it): where a recording's region is asked for on a GPU, so that a replay in
    /// another process finds the address free.
    pub cuda_record_va: usize,
    /// `OMPTARGET_RS_CUDA_STAGING_LIMIT` (bytes, default 512 MiB; 0 disables): pinned memory
    /// the CUDA plugin may keep for staging copies to and from pageable host memory.
    pub cuda_staging_limit: usize,
    /// `OMPTARGET_RS_CUDA_STAGING_THREADS` (default 0: the cores, at most 8): threads, the
    /// caller included, that share the host copies of a large staged copy.
    pub cuda_staging_threads: usize,
    /// `OMPTARGET_RS_CUDA_BATCH_COPIES` (default true): small copies of a construct reach the
    /// CUDA driver in one batch per direction.
    pub cuda_batch_copies: bool,
    /// `OMPTARGET_RS_CUDA_COPY_KERNEL` (default true): a batch of several small copies is made
    /// by one launch of the CUDA plugin's copy kernel instead of the driver's batch call.
    pub cuda_copy_kernel: bool,
    /// `OMPTARGET_QUERY_COUNT_THRESHOLD` (default 5): pending `nowait` queries a thread makes
    /// before it blocks on a construct instead of polling it.
    pub query_count_threshold: i64,
    /// `OMPTARGET_QUERY_COUNT_MAX` (default 10): the largest value of that count.
    pub query_count_max: i64,
    /// `OMPTARGET_QUERY_COUNT_BACKOFF_FACTOR` (default 0.5): the count is multiplied by this
    /// each time a construct completes.
    pub query_count_backoff_factor: f64,
    /// `LIBOMPTARGET_TREAT_ATTACH_AUTO_AS_ALWAYS` (default false): every ATTACH entry attaches
    /// whether or not its pointer or pointee was newly mapped (LLVM 22).
    pub treat_attach_auto_as_always: bool,
    /// What reading the environment had to say: values out of range (clamped) or not numbers
    /// (ignored). `from_env` prints them.
    pub notes: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            info: 0,
            debug: 0,
            memory_manager_threshold: omptarget_plugin::memory_manager::DEFAULT_THRESHOLD,
            map_force_atomic: true,
            deferred_completion: true,
            num_initial_streams: 1,
            disable_host_plugin: false,
            num_teams: 0,
            teams_thread_limit: 0,
            shared_memory_size: 0,
            device_rtl_debug: 0,
            stack_size: 0,
            heap_size: 0,
            profile: None,
            profile_granularity_us: 500,
            profile_summary: None,
            record: false,
            record_save_output: false,
            record_memory_gib: None,
            cuda_pool_release_threshold: None,
            cuda_pool_idle_ms: 1000,
            cuda_pool_low_water: None,
            cuda_oom_wait_ms: 3000,
            cuda_memory_pool: true,
            disable_cuda_plugin: false,
            cuda_blocking_sync: false,
            cuda_spin_us: Some(1000),
            cuda_pack_copies: true,
            cuda_streaming_stores: true,
            cuda_streaming_min: 8 << 20,
            cuda_pool_preallocate: 256 << 20,
            cuda_pool_idle_keep: 0,
            cuda_record_va: 0x6000_0000_0000,
            cuda_staging_limit: 512 << 20,
            cuda_staging_threads: 0,
            cuda_batch_copies: true,
            cuda_copy_kernel: true,
            query_count_threshold: 5,
            query_count_max: 10,
            query_count_backoff_factor: 0.5,
            treat_attach_auto_as_always: false,
            notes: Vec::new(),
        }
    }
}

/// The largest byte counts read from the environment: 1 TiB (no device memory, pool, heap or
/// staging area this runtime drives is larger).
const MAX_BYTES: i64 = 1 << 40;
/// The longest wait read from the environment: one hour, in milliseconds.
const MAX_MILLISECONDS: i64 = 3_600_000;
/// Queues created up front per device: more would only cost driver resources (LLVM's
/// plugins create 1 to 32).
const MAX_INITIAL_STREAMS: i64 = 1024;

/// `std::stoi` as LLVM 19 reads `LIBOMPTARGET_INFO` with it: leading white space, an optional
/// sign, the decimal digits up to the first other character (`1abc` is 1, `0x10` is 0). `None`
/// where `stoi` throws (no digit, or outside `int`), which stops LLVM's runtime.
pub fn stoi(s: &str) -> Option<i32> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (negative, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let magnitude: i128 = rest[..digits].parse().ok()?;
    i32::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// Reads the environment through `get`, keeping every number within its bounds.
struct Reader<F> {
    get: F,
    notes: std::cell::RefCell<Vec<String>>,
}

impl<F: Fn(&str) -> Option<String>> Reader<F> {
    fn note(&self, text: String) {
        self.notes.borrow_mut().push(text);
    }

    /// An integer (decimal, or hex with `0x`) within `[min, max]`: a value outside is clamped
    /// and one that is not a number is ignored, each with a note.
    fn int(&self, name: &str, min: i64, max: i64) -> Option<i64> {
        let raw = (self.get)(name)?;
        let Some(v) = parse_int(&raw) else {
            self.note(format!("{name}='{raw}' is not a number: ignored"));
            return None;
        };
        let clamped = v.clamp(min, max);
        if clamped != v {
            let side = if v > max { "more" } else { "less" };
            self.note(format!(
                "{name}={v} is {side} than this runtime accepts: using {clamped}"
            ));
        }
        Some(clamped)
    }

    fn flag(&self, name: &str, default: bool) -> bool {
        let Some(raw) = (self.get)(name) else {
            return default;
        };
        parse_bool(&raw).unwrap_or_else(|| {
            self.note(format!(
                "{name}='{raw}' is not true/false/yes/no/on/off/1/0: using {default}"
            ));
            default
        })
    }

    /// `LIBOMPTARGET_INFO`, read as LLVM 19 reads it (`std::stoi`): where LLVM's runtime stops
    /// (no number, or outside `int`), ours says so and keeps the default.
    fn info(&self, default: u32) -> u32 {
        let Some(raw) = (self.get)("LIBOMPTARGET_INFO") else {
            return default;
        };
        match stoi(&raw) {
            // A signed int: -1 turns every bit on.
            Some(v) => v as u32,
            None => {
                self.note(format!(
                    "LIBOMPTARGET_INFO='{raw}' is not a decimal number of int's range (LLVM 19's runtime stops here): ignored"
                ));
                default
            }
        }
    }
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()
    } else {
        s.parse().ok()
    }
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

impl Config {
    /// Reads the environment, and prints what it had to clamp or ignore.
    pub fn from_env() -> Self {
        let config = Self::from_lookup(|k| env::var(k).ok());
        for note in &config.notes {
            crate::message::message(format_args!("{note}"));
        }
        config
    }

    /// Reads configuration through `get` (the environment, or a test's map). Every number is
    /// kept within bounds (a byte count within 1 TiB, a wait within an hour, a count of queues
    /// within 1024, an `int` within `int`); each value clamped or ignored leaves a note.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        let d = Self::default();
        let r = Reader {
            get,
            notes: Default::default(),
        };
        let i32_max = i64::from(i32::MAX);
        let bytes =
            |k: &str, default: usize| r.int(k, 0, MAX_BYTES).map_or(default, |v| v as usize);
        let ms =
            |k: &str, default: u64| r.int(k, 0, MAX_MILLISECONDS).map_or(default, |v| v as u64);
        let mut c = Self {
            info: r.info(d.info),
            debug: r.int("LIBOMPTARGET_DEBUG", 0, i32_max).map_or(d.debug, |v| v as u32),
            memory_manager_threshold: bytes(
                "LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD",
                d.memory_manager_threshold,
            ),
            map_force_atomic: r.flag("LIBOMPTARGET_MAP_FORCE_ATOMIC", d.map_force_atomic),
            deferred_completion: r.flag(
                "OMPTARGET_RS_DEFERRED_COMPLETION",
                d.deferred_completion,
            ),
            num_initial_streams: r
                .int("LIBOMPTARGET_NUM_INITIAL_STREAMS", 0, MAX_INITIAL_STREAMS)
                .map_or(d.num_initial_streams, |v| v as usize),
            disable_host_plugin: r.flag("OMPTARGET_DISABLE_HOST_PLUGIN", d.disable_host_plugin),
            num_teams: r.int("OMP_NUM_TEAMS", 0, i32_max).map_or(0, |v| v as i32),
            teams_thread_limit: r
                .int("OMP_TEAMS_THREAD_LIMIT", 0, i32_max)
                .map_or(0, |v| v as i32),
            shared_memory_size: r
                .int("LIBOMPTARGET_SHARED_MEMORY_SIZE", 0, i64::from(u32::MAX))
                .map_or(0, |v| v as u32),
            device_rtl_debug: r
                .int("LIBOMPTARGET_DEVICE_RTL_DEBUG", 0, i32_max)
                .map_or(0, |v| v as u32),
            stack_size: bytes("LIBOMPTARGET_STACK_SIZE", 0),
            heap_size: bytes("LIBOMPTARGET_HEAP_SIZE", 0),
            profile: (r.get)("LIBOMPTARGET_PROFILE").filter(|p| !p.is_empty()),
            profile_granularity_us: r
                .int("LIBOMPTARGET_PROFILE_GRANULARITY", 0, MAX_MILLISECONDS * 1000)
                .map_or(d.profile_granularity_us, |v| v as u64),
            profile_summary: (r.get)("OMPTARGET_RS_PROFILE_SUMMARY").filter(|p| !p.is_empty()),
            record: r.flag("LIBOMPTARGET_RECORD", d.record),
            record_save_output: r.flag("LIBOMPTARGET_RR_SAVE_OUTPUT", d.record_save_output),
            record_memory_gib: r
                .int("LIBOMPTARGET_RR_DEVMEM_SIZE", 1, MAX_BYTES >> 30)
                .map(|v| v as u64),
            // Any byte count is a valid threshold (the default keeps everything).
            cuda_pool_release_threshold: (r.get)("OMPTARGET_RS_CUDA_POOL_RELEASE_THRESHOLD")
                .and_then(|v| {
                    let parsed = v.trim().parse().ok();
                    if parsed.is_none() {
                        r.note(format!(
                            "OMPTARGET_RS_CUDA_POOL_RELEASE_THRESHOLD='{v}' is not a number: ignored"
                        ));
                    }
                    parsed
                })
                .or(d.cuda_pool_release_threshold),
            cuda_pool_idle_ms: ms("OMPTARGET_RS_CUDA_POOL_IDLE_MS", d.cuda_pool_idle_ms),
            cuda_pool_low_water: r
                .int("OMPTARGET_RS_CUDA_POOL_LOW_WATER", 0, MAX_BYTES)
                .map(|v| v as u64)
                .or(d.cuda_pool_low_water),
            cuda_oom_wait_ms: ms("OMPTARGET_RS_CUDA_OOM_WAIT_MS", d.cuda_oom_wait_ms),
            cuda_memory_pool: r.flag("OMPTARGET_RS_CUDA_MEMORY_POOL", d.cuda_memory_pool),
            disable_cuda_plugin: r
                .flag("OMPTARGET_RS_DISABLE_CUDA_PLUGIN", d.disable_cuda_plugin),
            cuda_blocking_sync: r.flag("OMPTARGET_RS_CUDA_BLOCKING_SYNC", d.cuda_blocking_sync),
            cuda_spin_us: match r.int("OMPTARGET_RS_CUDA_SPIN_US", -1, 1_000_000) {
                Some(-1) => None,
                Some(v) => Some(v as u64),
                None => d.cuda_spin_us,
            },
            cuda_pack_copies: r.flag("OMPTARGET_RS_CUDA_PACK_COPIES", d.cuda_pack_copies),
            cuda_streaming_stores: r.flag(
                "OMPTARGET_RS_CUDA_STREAMING_STORES",
                d.cuda_streaming_stores,
            ),
            cuda_streaming_min: bytes("OMPTARGET_RS_CUDA_STREAMING_MIN", d.cuda_streaming_min),
            cuda_pool_preallocate: bytes(
                "OMPTARGET_RS_CUDA_POOL_PREALLOCATE",
                d.cuda_pool_preallocate,
            ),
            cuda_pool_idle_keep: bytes("OMPTARGET_RS_CUDA_POOL_IDLE_KEEP", d.cuda_pool_idle_keep as usize)
                as u64,
            cuda_record_va: r
                .int("OMPTARGET_RS_CUDA_RECORD_VA", 0, 1 << 56)
                .map_or(d.cuda_record_va, |v| v as usize),
            cuda_staging_limit: bytes("OMPTARGET_RS_CUDA_STAGING_LIMIT", d.cuda_staging_limit),
            cuda_staging_threads: r
                .int("OMPTARGET_RS_CUDA_STAGING_THREADS", 0, 256)
                .map_or(d.cuda_staging_threads, |v| v as usize),
            cuda_batch_copies: r.flag("OMPTARGET_RS_CUDA_BATCH_COPIES", d.cuda_batch_copies),
            cuda_copy_kernel: r.flag("OMPTARGET_RS_CUDA_COPY_KERNEL", d.cuda_copy_kernel),
            query_count_threshold: r
                .int("OMPTARGET_QUERY_COUNT_THRESHOLD", 0, i32_max)
                .unwrap_or(d.query_count_threshold),
            query_count_max: r
                .int("OMPTARGET_QUERY_COUNT_MAX", 0, i32_max)
                .unwrap_or(d.query_count_max),
            query_count_backoff_factor: (r.get)("OMPTARGET_QUERY_COUNT_BACKOFF_FACTOR")
                .and_then(|v| match v.trim().parse::<f64>() {
                    Ok(f) if (0.0..=1.0).contains(&f) => Some(f),
                    _ => {
                        r.note(format!(
                            "OMPTARGET_QUERY_COUNT_BACKOFF_FACTOR='{v}' is not a number from 0 to 1: ignored"
                        ));
                        None
                    }
                })
                .unwrap_or(d.query_count_backoff_factor),
            treat_attach_auto_as_always: r.flag(
                "LIBOMPTARGET_TREAT_ATTACH_AUTO_AS_ALWAYS",
                d.treat_attach_auto_as_always,
            ),
            notes: Vec::new(),
        };
        c.notes = r.notes.into_inner();
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn device_launch_settings() {
        let vars: HashMap<&str, &str> = [
            ("LIBOMPTARGET_SHARED_MEMORY_SIZE", "4096"),
            ("LIBOMPTARGET_DEVICE_RTL_DEBUG", "1"),
        ]
        .into();
        let c = Config::from_lookup(|k| vars.get(k).map(|v| v.to_string()));
        assert_eq!((c.shared_memory_size, c.device_rtl_debug), (4096, 1));
        let d = Config::from_lookup(|_| None);
        assert_eq!((d.shared_memory_size, d.device_rtl_debug), (0, 0));
    }

    #[test]
    fn reads_values_and_keeps_defaults() {
        let vars: HashMap<&str, &str> = [
            ("LIBOMPTARGET_INFO", "-1"),
            ("LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD", "0"),
            ("LIBOMPTARGET_MAP_FORCE_ATOMIC", "FALSE"),
            ("OMPTARGET_DISABLE_HOST_PLUGIN", "1"),
            ("OMP_NUM_TEAMS", "0x10"),
            ("OMPTARGET_RS_CUDA_STREAMING_MIN", "4194304"),
        ]
        .into();
        let c = Config::from_lookup(|k| vars.get(k).map(|v| v.to_string()));
        assert_eq!(c.info, u32::MAX);
        assert_eq!(c.memory_manager_threshold, 0);
        assert!(!c.map_force_atomic);
        assert!(c.disable_host_plugin);
        assert_eq!(c.num_teams, 16);
        assert_eq!(c.num_initial_streams, 1);
        assert_eq!(c.cuda_streaming_min, 4 << 20);
        let d = Config::from_lookup(|_| None);
        assert_eq!(d.cuda_streaming_min, 8 << 20);
        assert!(d.map_force_atomic);
        assert_eq!(d.memory_manager_threshold, 8192);
        assert!(d.notes.is_empty());
    }

    fn config(vars: &[(&str, &str)]) -> Config {
        let vars: HashMap<&str, &str> = vars.iter().copied().collect();
        Config::from_lookup(|k| vars.get(k).map(|v| v.to_string()))
    }

    #[test]
    fn libomptarget_info_is_read_as_llvm_reads_it() {
        // std::stoi: decimal, the digits before the first other character.
        for (value, bits) in [
            ("16", 16),
            ("0x10", 0),
            ("0x", 0),
            ("1abc", 1),
            (" +16", 16),
            ("16 ", 16),
            ("1e3", 1),
            ("-1", u32::MAX),
            ("2147483647", i32::MAX as u32),
            ("-2147483648", 0x8000_0000),
        ] {
            let c = config(&[("LIBOMPTARGET_INFO", value)]);
            assert_eq!(c.info, bits, "LIBOMPTARGET_INFO={value}");
            assert!(c.notes.is_empty(), "{value}: {:?}", c.notes);
        }
        // Where std::stoi throws (LLVM 19's runtime stops): ignored, with a note.
        for value in [
            "abc",
            "",
            "-",
            "2147483648",
            "-2147483649",
            "99999999999999999999999",
        ] {
            let c = config(&[("LIBOMPTARGET_INFO", value)]);
            assert_eq!(c.info, 0, "LIBOMPTARGET_INFO='{value}'");
            assert_eq!(c.notes.len(), 1, "{value}");
            assert!(
                c.notes[0].contains("LLVM 19's runtime stops here"),
                "{:?}",
                c.notes
            );
        }
    }

    #[test]
    fn every_number_is_bounded_with_a_note_when_clamped() {
        let c = config(&[
            ("LIBOMPTARGET_NUM_INITIAL_STREAMS", "100000000"),
            ("LIBOMPTARGET_HEAP_SIZE", "0x7fffffffffffffff"),
            ("OMP_NUM_TEAMS", "4294967297"),
            ("OMPTARGET_RS_CUDA_OOM_WAIT_MS", "-5"),
            ("LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD", "lots"),
            ("OMPTARGET_QUERY_COUNT_BACKOFF_FACTOR", "NaN"),
        ]);
        assert_eq!(c.num_initial_streams, 1024);
        assert_eq!(c.heap_size, 1 << 40);
        assert_eq!(c.num_teams, i32::MAX, "no longer truncated to 1");
        assert_eq!(c.cuda_oom_wait_ms, 0);
        assert_eq!(
            c.memory_manager_threshold, 8192,
            "not a number: the default"
        );
        assert_eq!(c.query_count_backoff_factor, 0.5);
        assert_eq!(c.notes.len(), 6, "{:#?}", c.notes);
        assert_eq!(
            c.notes[0],
            "LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD='lots' is not a number: ignored"
        );
        assert!(c.notes.contains(&"LIBOMPTARGET_NUM_INITIAL_STREAMS=100000000 is more than this runtime accepts: using 1024".to_owned()));
        assert!(
            c.notes.contains(
                &"OMPTARGET_RS_CUDA_OOM_WAIT_MS=-5 is less than this runtime accepts: using 0"
                    .to_owned()
            )
        );
    }
}
