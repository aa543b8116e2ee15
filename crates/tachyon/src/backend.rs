//! Where timing runs: the device a user asks for ([`Device`]: `cpu`, `gpu` or `auto`)
//! and the backend it resolves to ([`Backend`]), chosen once ([`Backend::select`], by
//! the CLI or a library user) and handed to the [`crate::Timer`], which passes it down
//! as `&Backend`.
//!
//! The one fallback rule: `gpu` without a usable GPU (no driver, no device, a build
//! without the `gpu` feature) is an error; `auto` then times on the CPU and says so in
//! one log line. `auto` also times designs below [`AUTO_GPU_MIN_PINS`] pins on the CPU,
//! where the GPU's fixed costs outweigh its speed. Both backends give bit-identical
//! results.

use std::fmt;
use std::str::FromStr;

use crate::TimerError;

/// The fewest pins for which [`Device::Auto`] times on the GPU. Measured on an H100
/// with 16 CPU cores (`tachyon tau --check-cpu`, docs/PERFORMANCE.md): the GPU wins from
/// about 10k gates when warm, but opening the context and loading the PTX once costs
/// more than the few tens of milliseconds gained below ~100k gates (~300k pins).
pub const AUTO_GPU_MIN_PINS: u32 = 300_000;

/// The default threshold of the mixed strategy: an incremental update whose frontier
/// (dirty pins and nets, [`tachyon_gba::Incremental::frontier_size`]) has at least this
/// many entries runs on the GPU over the resident state, a smaller one on the CPU.
/// Measured on an H100 with 16 CPU cores at 1M gates (`tachyon bench-resident`,
/// docs/PERFORMANCE.md): change files of 300 nets cost both sides ~525 ms, of 1000 nets
/// 965 ms on the CPU against 144 ms on the GPU, of 100 nets 213 against 239 ms.
pub const GPU_MIN_FRONTIER: usize = 1_000;

/// Over the resident state, an update whose frontier has at least this many entries
/// runs whole there, as a full update over that state does (every value left on the
/// device until a reader brings them back), instead of incrementally (every changed
/// value brought back and compared, CPPR and the backward seeds from the host's
/// bookkeeping). Measured at 1M gates on an H100 (`spefq.sh`, docs/PERFORMANCE.md):
/// change files of 1% and 10% of the nets; frontiers between [`GPU_MIN_FRONTIER`] and
/// the 1% file's were not measured.
pub const GPU_WHOLE_FRONTIER: usize = 5_000;

/// The timing device a user asks for (`--device cpu|gpu|auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Device {
    /// The CPU backend, even where a GPU exists.
    Cpu,
    /// The first GPU; an error when there is none.
    Gpu,
    /// The first GPU for large designs when one is usable, else the CPU (one log line
    /// says why).
    #[default]
    Auto,
}

impl FromStr for Device {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.to_ascii_lowercase().as_str() {
            "cpu" => Ok(Device::Cpu),
            "gpu" => Ok(Device::Gpu),
            "auto" => Ok(Device::Auto),
            other => Err(format!(
                "unknown device `{other}`: expected cpu, gpu or auto"
            )),
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
            Device::Auto => "auto",
        })
    }
}

/// How the backend is chosen and tuned, filled by the binary (from its flags and the
/// `TACHYON_GPU_*` environment variables); libraries read no environment variable.
#[derive(Debug, Clone, Default)]
pub struct BackendConfig {
    /// The most GPUs the GPU backend's CPPR passes share (`None`: every GPU of the
    /// machine). The results do not depend on it.
    pub gpu_limit: Option<usize>,
    /// The mixed strategy's threshold (`None`: [`GPU_MIN_FRONTIER`]): incremental
    /// updates whose frontier has at least this many dirty pins and nets run on the GPU
    /// over the resident state, smaller ones on the CPU.
    pub gpu_min_frontier: Option<usize>,
    /// Over the resident state, CPPR of the tests an incremental update reached runs on
    /// the host while they are fewer than one in this many tests, else over every test
    /// on the GPU (`None` or 0: the measured default; for measuring where the two meet).
    pub cppr_host_factor: Option<usize>,
    /// Over the resident state, updates whose frontier has at least this many dirty pins
    /// and nets run whole there (`None`: [`GPU_WHOLE_FRONTIER`]; `usize::MAX`: never;
    /// for measuring where the two meet).
    pub gpu_whole_frontier: Option<usize>,
    /// The first upload's RC trees go up as raw networks, flattened and laid out on the
    /// device, instead of laid out on the host (off by default: slower at 1M gates while
    /// the networks are gathered after the link; docs/PERFORMANCE.md).
    pub rc_layout_on_device: bool,
    /// A resident incremental update uploads the dirty nets' raw RC networks (e.g. a
    /// `read_spef` change file's), flattened and laid out on the device, instead of
    /// their trees laid out on the host (off by default: at 1M gates the gather of the
    /// networks from the design costs more than the host's layout; docs/PERFORMANCE.md).
    pub rc_edits_on_device: bool,
    /// The GPU runtime's switches (staging buffers, memory pool, graphs, sync steps).
    #[cfg(feature = "gpu")]
    pub gpu: tachyon_gpu::GpuConfig,
}

/// The backend timing runs on.
#[derive(Debug, Clone, Default)]
pub enum Backend {
    /// The CPU (rayon, on the current thread pool).
    #[default]
    Cpu,
    /// A GPU, for designs of at least its minimum size (smaller ones on the CPU).
    Gpu(GpuBackend),
}

/// The GPU backend: the GPU that holds the timing data, the GPUs the CPPR passes share
/// and the smallest design it times.
#[cfg(feature = "gpu")]
#[derive(Debug, Clone)]
pub struct GpuBackend {
    /// The GPUs: the first holds the timing data, all of them share the CPPR passes.
    gpus: Vec<std::sync::Arc<tachyon_gpu::GpuContext>>,
    /// Designs below this many pins are timed on the CPU.
    min_pins: u32,
    /// The mixed strategy's threshold ([`BackendConfig::gpu_min_frontier`]).
    min_frontier: usize,
    /// [`BackendConfig::cppr_host_factor`], resolved.
    cppr_host_factor: usize,
    /// [`BackendConfig::gpu_whole_frontier`], resolved.
    whole_frontier: usize,
    /// [`BackendConfig::rc_layout_on_device`].
    rc_layout_on_device: bool,
    /// [`BackendConfig::rc_edits_on_device`].
    rc_edits_on_device: bool,
}

/// The GPU backend, which a build without the `gpu` feature cannot make.
#[cfg(not(feature = "gpu"))]
#[derive(Debug, Clone)]
pub struct GpuBackend(Never);

#[cfg(not(feature = "gpu"))]
#[derive(Debug, Clone)]
enum Never {}

impl Backend {
    /// The backend for `device` under the one fallback rule (see the module docs).
    pub fn select(device: Device, config: &BackendConfig) -> Result<Backend, TimerError> {
        let min_pins = match device {
            Device::Cpu => return Ok(Backend::Cpu),
            Device::Gpu => 0,
            Device::Auto => AUTO_GPU_MIN_PINS,
        };
        match GpuBackend::open(config, min_pins) {
            Ok(gpu) => Ok(Backend::Gpu(gpu)),
            Err(reason) if device == Device::Auto => {
                tracing::info!("no usable GPU ({reason}); timing on the CPU");
                Ok(Backend::Cpu)
            }
            Err(reason) => Err(reason),
        }
    }

    /// The backend that times a design of `n_pins` pins: the GPU backend only from its
    /// minimum size.
    pub fn for_design(&self, n_pins: u32) -> &Backend {
        match self {
            Backend::Gpu(gpu) if n_pins < gpu.min_pins() => &Backend::Cpu,
            other => other,
        }
    }

    /// The mixed strategy's threshold of this backend ([`BackendConfig::gpu_min_frontier`];
    /// the CPU backend never runs on the GPU).
    pub fn gpu_min_frontier(&self) -> usize {
        match self {
            Backend::Cpu => usize::MAX,
            Backend::Gpu(gpu) => gpu.min_frontier(),
        }
    }

    /// [`BackendConfig::gpu_whole_frontier`] of this backend, resolved (the CPU backend
    /// keeps no resident state: never).
    pub(crate) fn gpu_whole_frontier(&self) -> usize {
        match self {
            Backend::Cpu => usize::MAX,
            Backend::Gpu(gpu) => gpu.whole_frontier(),
        }
    }

    /// [`BackendConfig::cppr_host_factor`] of this backend, resolved (the CPU backend
    /// keeps no resident state: the default).
    pub(crate) fn cppr_host_factor(&self) -> usize {
        match self {
            Backend::Cpu => crate::timer::HOST_CPPR_FACTOR,
            Backend::Gpu(gpu) => gpu.cppr_host_factor(),
        }
    }

    /// Whether a resident incremental update lays its dirty nets' RC trees out from
    /// their raw networks ([`BackendConfig::rc_edits_on_device`]). The CPU backend's
    /// twin of the resident state always does, so that CI covers that path after real
    /// edits (its values are the host layout's, bit for bit).
    pub(crate) fn rc_edits_on_device(&self) -> bool {
        match self {
            Backend::Cpu => true,
            Backend::Gpu(gpu) => gpu.rc_edits_on_device(),
        }
    }

    /// A short description for logs and reports (`cpu`, or the GPU's name).
    pub fn describe(&self) -> String {
        match self {
            Backend::Cpu => "cpu".to_string(),
            Backend::Gpu(gpu) => gpu.describe(),
        }
    }
}

#[cfg(feature = "gpu")]
impl GpuBackend {
    /// Opens GPU 0 and the other GPUs the CPPR passes may share (up to
    /// `config.gpu_limit`). GPU 0's kernels and staging buffers are made ready here
    /// ([`tachyon_gpu::GpuContext::warm_up`]), so that an opening beside the design's
    /// load (as the command line does it) takes them off the first update's path.
    fn open(config: &BackendConfig, min_pins: u32) -> Result<GpuBackend, TimerError> {
        use tachyon_gpu::GpuContext;
        let started = std::time::Instant::now();
        let first = GpuContext::open(0, &config.gpu)?;
        let opened = started.elapsed();
        first.warm_up()?;
        tracing::debug!(
            opened_ms = opened.as_secs_f64() * 1e3,
            warmed_ms = (started.elapsed() - opened).as_secs_f64() * 1e3,
            "gpu opened; kernels loaded and staging buffers allocated"
        );
        let wanted = config.gpu_limit.unwrap_or(usize::MAX).max(1);
        let mut gpus = vec![first];
        if wanted > 1 {
            for info in tachyon_gpu::devices()? {
                if gpus.len() >= wanted {
                    break;
                }
                if info.ordinal != 0 {
                    gpus.push(GpuContext::open(info.ordinal, &config.gpu)?);
                }
            }
        }
        Ok(GpuBackend {
            gpus,
            min_pins,
            min_frontier: config.gpu_min_frontier.unwrap_or(GPU_MIN_FRONTIER),
            cppr_host_factor: config
                .cppr_host_factor
                .filter(|&factor| factor > 0)
                .unwrap_or(crate::timer::HOST_CPPR_FACTOR),
            whole_frontier: config.gpu_whole_frontier.unwrap_or(GPU_WHOLE_FRONTIER),
            rc_layout_on_device: config.rc_layout_on_device,
            rc_edits_on_device: config.rc_edits_on_device,
        })
    }

    /// The GPU that holds the timing data.
    pub fn gpu(&self) -> &std::sync::Arc<tachyon_gpu::GpuContext> {
        &self.gpus[0]
    }

    /// The GPUs the CPPR passes share, the first one included.
    pub fn cppr_gpus(&self) -> &[std::sync::Arc<tachyon_gpu::GpuContext>] {
        &self.gpus
    }

    fn min_pins(&self) -> u32 {
        self.min_pins
    }

    fn min_frontier(&self) -> usize {
        self.min_frontier
    }

    /// [`BackendConfig::cppr_host_factor`], resolved.
    pub(crate) fn cppr_host_factor(&self) -> usize {
        self.cppr_host_factor
    }

    /// [`BackendConfig::gpu_whole_frontier`], resolved.
    pub(crate) fn whole_frontier(&self) -> usize {
        self.whole_frontier
    }

    /// [`BackendConfig::rc_layout_on_device`].
    pub(crate) fn rc_layout_on_device(&self) -> bool {
        self.rc_layout_on_device
    }

    /// [`BackendConfig::rc_edits_on_device`].
    pub(crate) fn rc_edits_on_device(&self) -> bool {
        self.rc_edits_on_device
    }

    fn describe(&self) -> String {
        self.gpu().name().to_string()
    }
}

#[cfg(not(feature = "gpu"))]
impl GpuBackend {
    fn open(_: &BackendConfig, _: u32) -> Result<GpuBackend, TimerError> {
        Err(TimerError::NoGpuSupport)
    }

    fn min_pins(&self) -> u32 {
        match self.0 {}
    }

    fn min_frontier(&self) -> usize {
        match self.0 {}
    }

    pub(crate) fn cppr_host_factor(&self) -> usize {
        match self.0 {}
    }

    pub(crate) fn whole_frontier(&self) -> usize {
        match self.0 {}
    }

    pub(crate) fn rc_edits_on_device(&self) -> bool {
        match self.0 {}
    }

    fn describe(&self) -> String {
        match self.0 {}
    }

    /// Never returns: no value of this type exists.
    pub(crate) fn unreachable(&self) -> ! {
        match self.0 {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_parse_and_print() {
        assert_eq!("GPU".parse::<Device>(), Ok(Device::Gpu));
        assert!("tpu".parse::<Device>().is_err());
        assert_eq!(Device::default().to_string(), "auto");
    }

    /// `cpu` is the CPU; `auto` never fails (it falls back to the CPU); `gpu` is the GPU
    /// or an error, never the CPU.
    #[test]
    fn the_fallback_rule() {
        let config = BackendConfig::default();
        assert!(matches!(
            Backend::select(Device::Cpu, &config),
            Ok(Backend::Cpu)
        ));
        let auto = Backend::select(Device::Auto, &config).expect("auto falls back to the CPU");
        println!("auto selected {}", auto.describe());
        match Backend::select(Device::Gpu, &config) {
            Ok(Backend::Gpu(_)) => println!("a GPU is present"),
            Ok(Backend::Cpu) => panic!("gpu must not fall back to the CPU"),
            Err(reason) => println!("gpu without a GPU is an error: {reason}"),
        }
        assert!(matches!(Backend::Cpu.for_design(u32::MAX), Backend::Cpu));
    }
}
