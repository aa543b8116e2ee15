//! A timing graph on the GPU: uploaded once, validated while it is copied, levelized
//! there frontier by frontier (`tachyon_kernels::levelize`), then the RC pass, the
//! forward levels and the test evaluation, and (after CPPR) the backward levels, every
//! value staying on the device between phases. The per-pin arithmetic is
//! `tachyon_kernels::propagate`, the functions the CPU backend runs.

use std::sync::Arc;
use std::time::Instant;

use tachyon_gpu::abi::{
    backward_level_shared_bytes, BackwardLevelArgs, ChangedWordsArgs, EvaluateTestsArgs, FillArgs,
    ForwardLevelArgs, GatherParasiticsArgs, GatherQuadsArgs, LevelSweep, LevelizeExcludeArgs,
    LevelizeFrontierArgs, LevelizeSourcesArgs, LevelizeWaitsArgs, RequiredSeedsArgs,
    ScatterQuadsArgs,
};
use tachyon_gpu::check::{check_indices, check_indices_or_none, check_length, check_starts};
use tachyon_gpu::{DeviceBuffer, Event, GpuContext, GpuError, LaunchShape, LayoutError, Replay};
use tachyon_kernels::propagate::{ArcDescriptor, TableDescriptor, TestDescriptor};

use crate::flat::{NetsParasitics, NetsRcValues};
use crate::{HostValueChanges, MOST_VALUES};

use super::layout::{ParasiticsLayout, RcNetBatch, TimingLayout};
use super::rc::{DeviceRcNets, RcLaunch};
use super::seeds::DeviceSeeds;

/// Threads per block of the per-pin (and per-entry) launches.
pub(crate) const THREADS_PER_BLOCK: u32 = 128;

/// A launch of a thread per item.
pub(crate) fn per_item(n_items: usize) -> LaunchShape {
    LaunchShape::per_item(n_items, THREADS_PER_BLOCK)
}

/// The parasitics on the GPU.
struct DeviceParasitics {
    rc: DeviceRcNets,
    pin_source: DeviceBuffer<u32>,
    net_root: DeviceBuffer<u32>,
    net_lumped: DeviceBuffer<[f64; 4]>,
}

/// What [`DeviceTiming::download_forward`] brings back: per pin, arc and test.
#[derive(Debug, Clone, Default)]
pub struct ForwardResults {
    pub arrival: Vec<[f64; 4]>,
    pub slew: Vec<[f64; 4]>,
    pub arc_delay: Vec<[f64; 4]>,
    /// The tests' required times before CPPR, by data transition; `None` when the
    /// design has no clock (no test was evaluated).
    pub test_required: Option<Vec<[f64; 2]>>,
}

impl ForwardResults {
    /// The array of `which`.
    pub fn values_mut(&mut self, which: ForwardArray) -> &mut Vec<[f64; 4]> {
        match which {
            ForwardArray::Arrival => &mut self.arrival,
            ForwardArray::Slew => &mut self.slew,
            ForwardArray::ArcDelay => &mut self.arc_delay,
        }
    }
}

/// One per-pin (arrivals, slews) or per-arc (delays) array of the forward levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardArray {
    Arrival,
    Slew,
    ArcDelay,
}

impl ForwardArray {
    /// Every array.
    pub const ALL: [ForwardArray; 3] = [
        ForwardArray::Arrival,
        ForwardArray::Slew,
        ForwardArray::ArcDelay,
    ];
}

/// Where [`DeviceTiming::download_forward`] puts the RC pass's values: per net, per pin.
#[derive(Debug)]
pub struct WireOutputs<'a> {
    pub net_load: &'a mut [[f64; 4]],
    pub wire_delay: &'a mut [[f64; 4]],
    pub wire_impulse: &'a mut [[f64; 4]],
}

/// The values of the forward phase on the GPU that holds them, which CPPR fills its
/// networks from there (`tachyon-cppr`'s `gpu` module): per arc and pin, `[f64; 4]`.
#[derive(Debug, Clone, Copy)]
pub struct ForwardValues<'a> {
    pub gpu: &'a Arc<GpuContext>,
    pub arc_delay: &'a DeviceBuffer<[f64; 4]>,
    pub arrival: &'a DeviceBuffer<[f64; 4]>,
    pub slew: &'a DeviceBuffer<[f64; 4]>,
}

/// The RC pass's values as the host holds them (it recomputes those of the nets edits
/// touch): per net, per pin, per pin.
#[derive(Debug, Clone, Copy)]
pub struct HostRcValues<'a> {
    pub net_load: &'a [[f64; 4]],
    pub wire_delay: &'a [[f64; 4]],
    pub wire_impulse: &'a [[f64; 4]],
}

/// What changed on the host since the device copy was last brought up to date
/// ([`DeviceTiming::apply_edits`]).
#[derive(Debug, Clone, Copy)]
pub struct EditedLayout<'a> {
    /// The flat arrays as they are now (an editable graph's rows with their free
    /// places, which hold the null arc: it adds nothing wherever it is read).
    pub layout: TimingLayout<'a>,
    pub delta: &'a crate::DeviceDelta,
    pub rc: HostRcValues<'a>,
}

/// Listed pins (sorted, each once) and their values.
pub type ListedValues = (Vec<u32>, Vec<[f64; 4]>);

/// Whether `changed` of `n_items` values is so many that bringing every value back
/// costs less than gathering them (small arrays are gathered all the same).
fn most(changed: usize, n_items: usize) -> bool {
    changed * MOST_VALUES > n_items && changed >= 1 << 16
}

/// The runs of consecutive values of `sorted` (sorted, without duplicates), as ranges.
fn runs(sorted: &[u32]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let first = *sorted.get(at)? as usize;
        let mut last = first;
        at += 1;
        while sorted
            .get(at)
            .is_some_and(|&next| next as usize == last + 1)
        {
            last += 1;
            at += 1;
        }
        Some(first..last + 1)
    })
}

/// Which way a sweep visits the levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Forward,
    Backward,
}

/// A timing graph on the GPU with its values.
pub struct DeviceTiming {
    gpu: Arc<GpuContext>,
    n_pins: usize,
    n_primary_inputs: usize,
    /// The level starts of all pins (one more than the levels), the primary inputs at
    /// the head of level 0; the forward sweep skips them.
    level_start: Vec<u32>,
    tests_evaluated: bool,
    fanin_start: DeviceBuffer<u32>,
    fanin_arcs: DeviceBuffer<u32>,
    fanout_start: DeviceBuffer<u32>,
    fanout_arcs: DeviceBuffer<u32>,
    arcs: DeviceBuffer<ArcDescriptor>,
    pin_net: DeviceBuffer<u32>,
    tables: DeviceBuffer<TableDescriptor>,
    table_data: DeviceBuffer<f64>,
    tests: DeviceBuffer<TestDescriptor>,
    /// All pins by level, computed on the GPU ([`DeviceTiming::levelize`]).
    level_pins: DeviceBuffer<u32>,
    /// Set by [`DeviceTiming::upload_parasitics`].
    parasitics: Option<DeviceParasitics>,
    net_load: DeviceBuffer<[f64; 4]>,
    wire_delay: DeviceBuffer<[f64; 4]>,
    wire_impulse: DeviceBuffer<[f64; 4]>,
    arrival: DeviceBuffer<[f64; 4]>,
    slew: DeviceBuffer<[f64; 4]>,
    arc_delay: DeviceBuffer<[f64; 4]>,
    test_required: DeviceBuffer<[f64; 2]>,
    seed: DeviceBuffer<[f64; 4]>,
    required: DeviceBuffer<[f64; 4]>,
    /// Recorded on the main stream after the last writes of the per-net and per-pin
    /// parasitics results, and after the forward levels: the copy stream waits on them
    /// to download those results while the main stream computes on.
    parasitics_done: Event,
    levels_done: Event,
    /// The level sweeps as CUDA graphs (captured on first use, then replayed).
    forward_replay: Replay,
    backward_replay: Replay,
    /// Whether the arrivals, slews and arc delays here, and the required times, are
    /// the host's but for what the host changed since
    /// ([`crate::HostValueChanges`]): an update can then compare its new values with
    /// these and bring back only the changes. False when the arrays were allocated
    /// again (their sizes changed) until a step brings every value back.
    forward_kept: bool,
    required_kept: bool,
    /// The primary inputs' values the last forward step scattered, kept here: a full
    /// update without edits scatters the same again without uploading them.
    primary_inputs: Option<PrimaryInputs>,
}

/// The primary inputs' (pin, arrival, slew) values as the host gave them, and on the
/// device.
struct PrimaryInputs {
    values: Vec<(u32, [f64; 4], [f64; 4])>,
    pins: DeviceBuffer<u32>,
    arrivals: DeviceBuffer<[f64; 4]>,
    slews: DeviceBuffer<[f64; 4]>,
}

impl PrimaryInputs {
    /// Whether `values` are these, bit for bit.
    fn holds(&self, values: &[(u32, [f64; 4], [f64; 4])]) -> bool {
        use tachyon_kernels::changes::same_bits;
        self.values.len() == values.len()
            && self.values.iter().zip(values).all(|(kept, new)| {
                kept.0 == new.0 && same_bits(&kept.1, &new.1) && same_bits(&kept.2, &new.2)
            })
    }
}

/// The values a step held before it ran, kept for the comparison after it.
pub struct KeptValues {
    first: DeviceBuffer<[f64; 4]>,
    second: Option<DeviceBuffer<[f64; 4]>>,
    third: Option<DeviceBuffer<[f64; 4]>>,
}

impl DeviceTiming {
    /// Validates `layout`, checks that it fits the GPU's free memory (an
    /// [`GpuError::OutOfMemory`] saying how much is needed otherwise), uploads it and
    /// levelizes it on the GPU.
    pub fn upload(
        gpu: &Arc<GpuContext>,
        layout: &TimingLayout<'_>,
    ) -> Result<DeviceTiming, GpuError> {
        const DURING: &str = "uploading the timing graph";
        let started = Instant::now();
        let clock = gpu.upload_clock();
        gpu.ensure_free(DURING, layout.device_bytes())?;
        // The layout is validated while it is copied, the long index arrays piece by
        // piece by the threads that copy them (a second pass over them took 11 ms alone
        // at 1M gates on 16 cores, 30-35 ms beside the other host work): copies of
        // unchecked indices are harmless as long as no kernel reads them, and the first
        // kernel (levelization) runs only once every check has passed.
        let ms_since = |instant: Instant| instant.elapsed().as_secs_f64() * 1e3;
        let validate = || (layout.validate_all_but_long_arrays(), ms_since(started));
        let copy = || Self::copy_layout(gpu, layout).map(|timing| (timing, ms_since(started)));
        let (validated, copied) = if gpu.config().sync_steps {
            let validated = validate();
            (validated, copy())
        } else {
            rayon::join(validate, copy)
        };
        let (validation, validated_ms) = validated;
        validation.map_err(GpuError::Layout)?;
        let (mut timing, copied_ms) = copied?;
        // Where the copy's time went on the host (the copy engine's time is what the
        // waits for a free staging buffer show of it).
        let copy = gpu.upload_clock().since(&clock);
        let levelize_started = Instant::now();
        timing.level_start = timing.levelize(layout.primary_inputs)?;
        let ms = |duration: std::time::Duration| duration.as_secs_f64() * 1e3;
        tracing::debug!(
            levels = timing.level_start.len() - 1,
            validated_ms,
            copied_ms,
            staged_mb = copy.staged_bytes as f64 / 1e6,
            allocating_ms = ms(copy.allocating),
            filling_ms = ms(copy.filling),
            waiting_ms = ms(copy.waiting),
            ms = ms(levelize_started.elapsed()),
            "levelized on the GPU (validated while copied)"
        );
        // Until the first passes record them, the events stand behind the allocations'
        // fills, so a download on the copy stream never reads a buffer being filled.
        gpu.record(&timing.parasitics_done)?;
        gpu.record(&timing.levels_done)?;
        Ok(timing)
    }

    /// The device buffers of `layout`: its arrays copied (the long index arrays checked
    /// piece by piece), the per-pin and per-arc results allocated.
    fn copy_layout(
        gpu: &Arc<GpuContext>,
        layout: &TimingLayout<'_>,
    ) -> Result<DeviceTiming, GpuError> {
        const DURING: &str = "uploading the timing graph";
        let graph = &layout.graph;
        let (n_pins, n_nets) = (layout.n_pins(), layout.n_nets());
        Ok(DeviceTiming {
            gpu: Arc::clone(gpu),
            n_pins,
            n_primary_inputs: layout.primary_inputs.len(),
            level_start: Vec::new(),
            tests_evaluated: false,
            fanin_start: gpu.upload(DURING, graph.fanin_start)?,
            fanin_arcs: gpu.upload_checked(DURING, graph.fanin_arcs, &|first, piece| {
                layout.check_arc_ids("fanin_arcs", first, piece)
            })?,
            fanout_start: gpu.upload(DURING, graph.fanout_start)?,
            fanout_arcs: gpu.upload_checked(DURING, graph.fanout_arcs, &|first, piece| {
                layout.check_arc_ids("fanout_arcs", first, piece)
            })?,
            arcs: gpu.upload_checked(DURING, graph.arcs, &|first, piece| {
                layout.check_arcs(first, piece)
            })?,
            pin_net: gpu.upload_checked(DURING, graph.pin_net, &|first, piece| {
                layout.check_pin_nets(first, piece)
            })?,
            tables: gpu.upload(DURING, graph.tables)?,
            table_data: gpu.upload(DURING, graph.table_data)?,
            tests: gpu.upload(DURING, layout.tests)?,
            level_pins: gpu.allocate(DURING, n_pins)?,
            parasitics: None,
            net_load: gpu.allocate(DURING, n_nets)?,
            wire_delay: gpu.allocate(DURING, n_pins)?,
            wire_impulse: gpu.allocate(DURING, n_pins)?,
            arrival: gpu.allocate(DURING, n_pins)?,
            slew: gpu.allocate(DURING, n_pins)?,
            arc_delay: gpu.allocate(DURING, graph.arcs.len())?,
            test_required: gpu.allocate(DURING, layout.tests.len())?,
            seed: gpu.allocate(DURING, n_pins)?,
            required: gpu.allocate(DURING, n_pins)?,
            parasitics_done: gpu.new_event()?,
            levels_done: gpu.new_event()?,
            forward_replay: Replay::default(),
            backward_replay: Replay::default(),
            forward_kept: false,
            required_kept: false,
            primary_inputs: None,
        })
    }

    /// Brings the device copy up to date with the host's after edits, uploading only
    /// what changed where the arrays kept their sizes: the arc descriptors and pins'
    /// nets edits patched (runs of neighbouring entries copied at once), the RC values
    /// of the nets the host recomputed (scattered). Changed rows, or arrays that grew,
    /// go up whole with the levels `levels` gives (`(level_start, level_pins)`, the
    /// primary inputs heading level 0); the RC values then go up whole too. From then
    /// on the RC values come from the host: the trees on the device are dropped.
    pub fn apply_edits(
        &mut self,
        edited: &EditedLayout<'_>,
        levels: impl FnOnce() -> Option<(Vec<u32>, Vec<u32>)>,
    ) -> Result<(), GpuError> {
        const DURING: &str = "uploading edits";
        let EditedLayout { layout, delta, rc } = *edited;
        let graph = &layout.graph;
        let (n_pins, n_nets) = (layout.n_pins(), layout.n_nets());
        let resized = n_pins != self.n_pins
            || graph.arcs.len() != self.arcs.len()
            || n_nets != self.net_load.len()
            || layout.tests.len() != self.tests.len()
            || graph.fanin_arcs.len() != self.fanin_arcs.len()
            || graph.fanout_arcs.len() != self.fanout_arcs.len();
        check_length("net_load", n_nets, rc.net_load.len())?;
        check_length("wire_delay", n_pins, rc.wire_delay.len())?;
        check_length("wire_impulse", n_pins, rc.wire_impulse.len())?;
        let gpu = Arc::clone(&self.gpu);
        if delta.rc_all || !delta.nets.is_empty() || !delta.wire_pins.is_empty() {
            // The trees on the device no longer describe those nets: their values come
            // from the host from now on, and a full update over the resident state
            // keeps the RC values it finds here.
            self.parasitics = None;
        }
        if delta.rows || resized {
            layout.validate()?;
            let (level_start, level_pins) =
                levels().ok_or(LayoutError::Missing { what: "levels" })?;
            check_length("level_pins", n_pins, level_pins.len())?;
            check_indices("level_pins", &level_pins, n_pins)?;
            check_starts("level_start", &level_start, n_pins)?;
            // The old buffers go before the new ones come, so that the peak is the
            // larger of the two.
            self.parasitics = None;
            let upload = |data: &[u32]| gpu.upload(DURING, data);
            self.fanin_start = upload(graph.fanin_start)?;
            self.fanin_arcs = upload(graph.fanin_arcs)?;
            self.fanout_start = upload(graph.fanout_start)?;
            self.fanout_arcs = upload(graph.fanout_arcs)?;
            self.arcs = gpu.upload(DURING, graph.arcs)?;
            self.pin_net = upload(graph.pin_net)?;
            self.tests = gpu.upload(DURING, layout.tests)?;
            self.level_pins = upload(&level_pins)?;
            self.level_start = level_start;
            self.n_pins = n_pins;
            self.n_primary_inputs = layout.primary_inputs.len();
            if resized {
                self.forward_kept = false;
                self.required_kept = false;
                self.arrival = gpu.allocate(DURING, n_pins)?;
                self.slew = gpu.allocate(DURING, n_pins)?;
                self.seed = gpu.allocate(DURING, n_pins)?;
                self.required = gpu.allocate(DURING, n_pins)?;
                self.arc_delay = gpu.allocate(DURING, graph.arcs.len())?;
                self.test_required = gpu.allocate(DURING, layout.tests.len())?;
            }
            self.net_load = gpu.upload(DURING, rc.net_load)?;
            self.wire_delay = gpu.upload(DURING, rc.wire_delay)?;
            self.wire_impulse = gpu.upload(DURING, rc.wire_impulse)?;
            // The captured sweeps launched the old levels over the old buffers.
            self.forward_replay = Replay::default();
            self.backward_replay = Replay::default();
            return Ok(());
        }
        for run in runs(&delta.arcs) {
            let piece = &graph.arcs[run.clone()];
            layout.check_arcs(run.start, piece)?;
            gpu.write(&self.arcs, run.start, piece)?;
        }
        for run in runs(&delta.pins) {
            let piece = &graph.pin_net[run.clone()];
            layout.check_pin_nets(run.start, piece)?;
            gpu.write(&self.pin_net, run.start, piece)?;
        }
        if delta.tests {
            layout.validate_all_but_long_arrays()?;
            gpu.write(&self.tests, 0, layout.tests)?;
        }
        if delta.rc_all || delta.nets.len() * 8 >= n_nets || delta.wire_pins.len() * 8 >= n_pins {
            // Most values changed: the arrays whole, copied in pieces through the
            // staging buffers, cost less than gathering and scattering them.
            gpu.write(&self.net_load, 0, rc.net_load)?;
            gpu.write(&self.wire_delay, 0, rc.wire_delay)?;
            gpu.write(&self.wire_impulse, 0, rc.wire_impulse)?;
            return Ok(());
        }
        let gather = |indices: &[u32], values: &[[f64; 4]]| -> Vec<[f64; 4]> {
            indices.iter().map(|&at| values[at as usize]).collect()
        };
        self.scatter(
            &delta.nets,
            &gather(&delta.nets, rc.net_load),
            &self.net_load,
        )?;
        let pins = &delta.wire_pins;
        self.scatter(pins, &gather(pins, rc.wire_delay), &self.wire_delay)?;
        self.scatter(pins, &gather(pins, rc.wire_impulse), &self.wire_impulse)?;
        Ok(())
    }

    /// Validates and uploads the parasitics of the graph (replacing any uploaded before).
    pub fn upload_parasitics(&mut self, layout: &ParasiticsLayout<'_>) -> Result<(), GpuError> {
        const DURING: &str = "uploading the parasitics";
        layout.validate(self.n_pins, self.net_load.len())?;
        self.parasitics = None;
        self.gpu.ensure_free(DURING, layout.device_bytes())?;
        self.parasitics = Some(DeviceParasitics {
            rc: DeviceRcNets::upload(&self.gpu, layout.rc)?,
            pin_source: self.gpu.upload(DURING, layout.pin_source)?,
            net_root: self.gpu.upload(DURING, layout.net_root)?,
            net_lumped: self.gpu.upload(DURING, layout.net_lumped)?,
        });
        Ok(())
    }

    /// [`DeviceTiming::upload_parasitics`] for trees already laid out on this GPU (`rc`,
    /// e.g. flattened there from the raw networks); `layout.rc` is not read.
    pub fn adopt_parasitics(
        &mut self,
        rc: DeviceRcNets,
        layout: &ParasiticsLayout<'_>,
    ) -> Result<(), GpuError> {
        const DURING: &str = "uploading the parasitics";
        layout.validate_for(rc.n_nodes() as usize, self.n_pins, self.net_load.len())?;
        self.parasitics = None;
        self.parasitics = Some(DeviceParasitics {
            rc,
            pin_source: self.gpu.upload(DURING, layout.pin_source)?,
            net_root: self.gpu.upload(DURING, layout.net_root)?,
            net_lumped: self.gpu.upload(DURING, layout.net_lumped)?,
        });
        Ok(())
    }

    /// The RC values of some nets, computed here (a resident incremental update): their
    /// trees uploaded, the RC pass and the gathers over them, the results scattered to
    /// the nets' and pins' places. Returns them for the host's copy: per net of
    /// `layout.nets` its load, per pin of `layout.pins` its wire delay and impulse. The
    /// trees of every net kept here no longer describe those nets: they are dropped.
    pub fn nets_parasitics(&mut self, layout: &NetsParasitics) -> Result<NetsRcValues, GpuError> {
        self.check_nets_layout(layout)?;
        self.parasitics = None;
        if layout.nets.is_empty() {
            return Ok(NetsRcValues::default());
        }
        let batch = RcNetBatch::new(
            layout.net_offsets.clone(),
            layout.parent.clone(),
            layout.res.clone(),
            layout.cap.clone(),
        )?;
        let rc = DeviceRcNets::upload(&self.gpu, &batch)?;
        self.nets_rc_values(&rc, layout)
    }

    /// [`DeviceTiming::nets_parasitics`] over trees laid out on the device already
    /// (`rc`, for `layout`'s nets with trees, from [`NetsParasitics::build_indices`]).
    pub fn nets_parasitics_laid_out(
        &mut self,
        rc: &DeviceRcNets,
        layout: &NetsParasitics,
    ) -> Result<NetsRcValues, GpuError> {
        self.check_nets_layout(layout)?;
        check_length(
            "RC nets laid out",
            layout.net_offsets.len(),
            rc.n_nets() as usize + 1,
        )?;
        check_length("RC nodes laid out", layout.n_nodes(), rc.n_nodes() as usize)?;
        self.parasitics = None;
        if layout.nets.is_empty() {
            return Ok(NetsRcValues::default());
        }
        self.nets_rc_values(rc, layout)
    }

    /// Checks a layout of some nets against this graph (their indices; not the nodes).
    fn check_nets_layout(&self, layout: &NetsParasitics) -> Result<(), GpuError> {
        let (n_nets, n_pins) = (self.net_load.len(), self.n_pins);
        check_length("net_root", layout.nets.len(), layout.net_root.len())?;
        check_length("net_lumped", layout.nets.len(), layout.net_lumped.len())?;
        check_length("pin_source", layout.pins.len(), layout.pin_source.len())?;
        check_indices("dirty nets", &layout.nets, n_nets)?;
        check_indices("dirty pins", &layout.pins, n_pins)?;
        let n_nodes = layout.n_nodes();
        check_indices_or_none("net_root", &layout.net_root, n_nodes, true)?;
        check_indices_or_none("pin_source", &layout.pin_source, n_nodes, true)?;
        Ok(())
    }

    /// The RC pass over `rc` (`layout`'s trees, checked) and the gathers and scatters of
    /// [`DeviceTiming::nets_parasitics`].
    fn nets_rc_values(
        &mut self,
        rc: &DeviceRcNets,
        layout: &NetsParasitics,
    ) -> Result<NetsRcValues, GpuError> {
        const DURING: &str = "the RC pass of the dirty nets";
        let gpu = Arc::clone(&self.gpu);
        rc.launch(RcLaunch::default())?;
        let (k_nets, k_pins) = (layout.nets.len(), layout.pins.len());
        let net_load = gpu.allocate::<[f64; 4]>(DURING, k_nets)?;
        let wire_delay = gpu.allocate::<[f64; 4]>(DURING, k_pins)?;
        let wire_impulse = gpu.allocate::<[f64; 4]>(DURING, k_pins)?;
        let pin_source = gpu.upload(DURING, &layout.pin_source)?;
        let net_root = gpu.upload(DURING, &layout.net_root)?;
        let net_lumped = gpu.upload(DURING, &layout.net_lumped)?;
        gpu.launch(
            per_item(k_pins.max(k_nets)),
            GatherParasiticsArgs {
                pin_source: pin_source.view(),
                net_root: net_root.view(),
                net_lumped: net_lumped.view(),
                node_load: rc.load.view(),
                node_delay: rc.delay.view(),
                node_impulse: rc.impulse.view(),
                net_load: net_load.cells(),
                wire_delay: wire_delay.cells(),
                wire_impulse: wire_impulse.cells(),
            },
        )?;
        let scatter = |index: &DeviceBuffer<u32>,
                       values: &DeviceBuffer<[f64; 4]>,
                       out: &DeviceBuffer<[f64; 4]>| {
            gpu.launch(
                per_item(index.len()),
                ScatterQuadsArgs {
                    index: index.view(),
                    values: values.view(),
                    out: out.cells(),
                },
            )
        };
        let nets = gpu.upload(DURING, &layout.nets)?;
        let pins = gpu.upload(DURING, &layout.pins)?;
        scatter(&nets, &net_load, &self.net_load)?;
        scatter(&pins, &wire_delay, &self.wire_delay)?;
        scatter(&pins, &wire_impulse, &self.wire_impulse)?;
        Ok(NetsRcValues {
            net_load: gpu.download(&net_load, 0..k_nets)?,
            wire_delay: gpu.download(&wire_delay, 0..k_pins)?,
            wire_impulse: gpu.download(&wire_impulse, 0..k_pins)?,
        })
    }

    /// Copies the RC pass's values back (waits for them): per net, per pin, per pin.
    pub fn download_rc(&self, wire: WireOutputs<'_>) -> Result<(), GpuError> {
        let copy = |from: &DeviceBuffer<[f64; 4]>, to: &mut [[f64; 4]]| {
            check_length("download", from.len(), to.len())?;
            self.gpu.download_into(from, to)
        };
        copy(&self.net_load, wire.net_load)?;
        copy(&self.wire_delay, wire.wire_delay)?;
        copy(&self.wire_impulse, wire.wire_impulse)
    }

    /// Whether the RC trees on the device describe every net (uploaded, and no net's RC
    /// values came from the host since), so that the RC pass can run there again.
    pub fn has_parasitics(&self) -> bool {
        self.parasitics.is_some()
    }

    /// What CPPR fills its networks from on this GPU: the forward phase's values.
    pub fn forward_values(&self) -> ForwardValues<'_> {
        ForwardValues {
            gpu: &self.gpu,
            arc_delay: &self.arc_delay,
            arrival: &self.arrival,
            slew: &self.slew,
        }
    }

    /// The graph's fan-in rows and arc descriptors on the device (what the path
    /// graph's in-edges are built from, with the forward values).
    pub fn fanin_rows(
        &self,
    ) -> (
        &DeviceBuffer<u32>,
        &DeviceBuffer<u32>,
        &DeviceBuffer<ArcDescriptor>,
    ) {
        (&self.fanin_start, &self.fanin_arcs, &self.arcs)
    }

    /// The levels found on the GPU ([`DeviceTiming::upload`]), brought back:
    /// `(level_start, level_pins)`, every pin once, level after level (the primary
    /// inputs heading level 0, any order within a level).
    pub fn levels(&self) -> Result<(Vec<u32>, Vec<u32>), GpuError> {
        let level_pins = self.gpu.download(&self.level_pins, 0..self.n_pins)?;
        Ok((self.level_start.clone(), level_pins))
    }

    /// The GPU this timing lives on.
    pub fn gpu(&self) -> &Arc<GpuContext> {
        &self.gpu
    }

    /// Levelizes the uploaded graph on the GPU, frontier by frontier: every pin goes
    /// into `level_pins`, level by level, the primary inputs first (they head level 0).
    /// Returns the level starts (one more than the levels). Each frontier costs one
    /// launch and a 4-byte read of its successor's size.
    fn levelize(&mut self, primary_inputs: &[u32]) -> Result<Vec<u32>, GpuError> {
        const DURING: &str = "levelizing the graph";
        let gpu = &self.gpu;
        let n_pins = self.n_pins;
        let n_inputs = primary_inputs.len();
        let remaining = gpu.allocate::<u32>(DURING, n_pins)?;
        let counter = gpu.allocate::<u32>(DURING, 1)?;
        gpu.launch(
            per_item(n_pins),
            LevelizeWaitsArgs {
                fanin_start: self.fanin_start.view(),
                remaining: remaining.cells(),
            },
        )?;
        gpu.write(&self.level_pins, 0, primary_inputs)?;
        if n_inputs > 0 {
            gpu.launch(
                per_item(n_inputs),
                LevelizeExcludeArgs {
                    pins: self.level_pins.view().slice(0..n_inputs),
                    remaining: remaining.cells(),
                },
            )?;
        }
        let read_counter =
            || -> Result<usize, GpuError> { Ok(gpu.download(&counter, 0..1)?[0] as usize) };
        gpu.zero(&counter, 0..1)?;
        gpu.launch(
            per_item(n_pins),
            LevelizeSourcesArgs {
                remaining: remaining.view(),
                out: self.level_pins.cells().slice(n_inputs..n_pins),
                counter: counter.cells(),
            },
        )?;
        let mut level_start = vec![0u32];
        let mut start = 0;
        let mut count = n_inputs + read_counter()?;
        while count > 0 {
            let next = start + count;
            level_start.push(next as u32);
            gpu.zero(&counter, 0..1)?;
            gpu.launch(
                per_item(count),
                LevelizeFrontierArgs {
                    frontier: self.level_pins.view().slice(start..next),
                    fanout_start: self.fanout_start.view(),
                    fanout_arcs: self.fanout_arcs.view(),
                    arcs: self.arcs.view(),
                    remaining: remaining.cells(),
                    out: self.level_pins.cells().slice(next..n_pins),
                    counter: counter.cells(),
                },
            )?;
            start = next;
            count = read_counter()?;
        }
        if start != n_pins {
            return Err(GpuError::Layout(LayoutError::NotAcyclic {
                levelized: start as u32,
                n_items: n_pins as u32,
            }));
        }
        Ok(level_start)
    }

    /// The RC pass and the gathers that give every net its driver load and every pin
    /// its wire delay and impulse. Returns once queued.
    pub fn run_parasitics(&mut self) -> Result<(), GpuError> {
        let parasitics = self
            .parasitics
            .as_ref()
            .ok_or(LayoutError::Missing { what: "parasitics" })?;
        parasitics.rc.launch(RcLaunch::default())?;
        self.gpu.launch(
            per_item(self.n_pins.max(self.net_load.len())),
            GatherParasiticsArgs {
                pin_source: parasitics.pin_source.view(),
                net_root: parasitics.net_root.view(),
                net_lumped: parasitics.net_lumped.view(),
                node_load: parasitics.rc.load.view(),
                node_delay: parasitics.rc.delay.view(),
                node_impulse: parasitics.rc.impulse.view(),
                net_load: self.net_load.cells(),
                wire_delay: self.wire_delay.cells(),
                wire_impulse: self.wire_impulse.cells(),
            },
        )?;
        self.gpu.record(&self.parasitics_done)
    }

    /// The forward levels and the test evaluation (`period`: the clock's, `None` when the
    /// design has none, so no test is evaluated), after [`DeviceTiming::run_parasitics`].
    /// `primary_inputs` are the `(pin, arrival, slew)` of every primary input, each pin
    /// once. Returns once everything is queued.
    pub fn run_forward(
        &mut self,
        primary_inputs: &[(u32, [f64; 4], [f64; 4])],
        period: Option<f64>,
    ) -> Result<(), GpuError> {
        const DURING: &str = "uploading per-pin values";
        let started = Instant::now();
        // Uploaded when they changed only, and before the fills are queued (a copy
        // from pageable memory may wait for the work queued before it).
        let pins: Vec<u32> = primary_inputs.iter().map(|entry| entry.0).collect();
        check_indices("scattered pins", &pins, self.arrival.len())?;
        let uploaded = match &self.primary_inputs {
            Some(kept) if kept.holds(primary_inputs) => false,
            _ => {
                self.primary_inputs = None;
                let arrivals: Vec<[f64; 4]> = primary_inputs.iter().map(|entry| entry.1).collect();
                let slews: Vec<[f64; 4]> = primary_inputs.iter().map(|entry| entry.2).collect();
                self.primary_inputs = Some(PrimaryInputs {
                    values: primary_inputs.to_vec(),
                    pins: self.gpu.upload(DURING, &pins)?,
                    arrivals: self.gpu.upload(DURING, &arrivals)?,
                    slews: self.gpu.upload(DURING, &slews)?,
                });
                true
            }
        };
        let uploaded_ms = started.elapsed().as_secs_f64() * 1e3;
        self.fill_no_value(&self.arrival)?;
        self.fill_no_value(&self.slew)?;
        self.fill_no_value(&self.arc_delay)?;
        if let Some(inputs) = self
            .primary_inputs
            .as_ref()
            .filter(|inputs| !inputs.pins.is_empty())
        {
            for (values, target) in [
                (&inputs.arrivals, &self.arrival),
                (&inputs.slews, &self.slew),
            ] {
                self.gpu.launch(
                    per_item(inputs.pins.len()),
                    ScatterQuadsArgs {
                        index: inputs.pins.view(),
                        values: values.view(),
                        out: target.cells(),
                    },
                )?;
            }
        }
        let filled_ms = started.elapsed().as_secs_f64() * 1e3;
        self.sweep(Order::Forward)?;
        tracing::debug!(
            uploaded,
            uploaded_ms,
            filled_ms,
            launched_ms = started.elapsed().as_secs_f64() * 1e3,
            "gpu forward: the primary inputs' values, the fills and the levels queued"
        );
        self.gpu.record(&self.levels_done)?;
        self.tests_evaluated = false;
        if let (Some(period), true) = (period, !self.tests.is_empty()) {
            self.gpu.launch(
                per_item(self.tests.len()),
                EvaluateTestsArgs {
                    tests: self.tests.view(),
                    period,
                    arrival: self.arrival.view(),
                    slew: self.slew.view(),
                    tables: self.tables.view(),
                    table_data: self.table_data.view(),
                    required: self.test_required.cells(),
                },
            )?;
            self.tests_evaluated = true;
        }
        Ok(())
    }

    /// Runs the levels of one sweep: captured as a CUDA graph on first use and replayed
    /// (every launch reads and writes buffers allocated at upload, so one graph serves
    /// every run), or launch by launch where the configuration says so.
    fn sweep(&mut self, order: Order) -> Result<(), GpuError> {
        let slot = match order {
            Order::Forward => &mut self.forward_replay,
            Order::Backward => &mut self.backward_replay,
        };
        let mut replay = std::mem::take(slot);
        tracing::trace!(
            ?order,
            levels = self.level_start.len().saturating_sub(1),
            "gpu level sweep"
        );
        let ran = self
            .gpu
            .run_replayed(&mut replay, || self.launch_levels(order));
        match order {
            Order::Forward => self.forward_replay = replay,
            Order::Backward => self.backward_replay = replay,
        }
        ran
    }

    /// Queues one launch per non-empty level of the sweep in `order`: forward over the
    /// levels without the primary inputs (fan-in), backward over all pins (fan-out).
    fn launch_levels(&self, order: Order) -> Result<(), GpuError> {
        let n_levels = self.level_start.len().saturating_sub(1);
        let level = |level: usize| {
            let first = (self.level_start[level] as usize).max(self.n_primary_inputs);
            let last = (self.level_start[level + 1] as usize).max(self.n_primary_inputs);
            let (csr_start, csr_arcs) = match order {
                Order::Forward => (&self.fanin_start, &self.fanin_arcs),
                Order::Backward => (&self.fanout_start, &self.fanout_arcs),
            };
            let pins = match order {
                Order::Forward => first..last,
                Order::Backward => {
                    self.level_start[level] as usize..self.level_start[level + 1] as usize
                }
            };
            LevelSweep {
                pins: self.level_pins.view().slice(pins),
                csr_start: csr_start.view(),
                csr_arcs: csr_arcs.view(),
                arcs: self.arcs.view(),
            }
        };
        let launch = |level: LevelSweep<'_>| -> Result<(), GpuError> {
            if level.pins.is_empty() {
                return Ok(());
            }
            let shape = per_item(level.pins.len());
            match order {
                Order::Forward => self.gpu.launch(
                    shape,
                    ForwardLevelArgs {
                        level,
                        pin_net: self.pin_net.view(),
                        net_load: self.net_load.view(),
                        tables: self.tables.view(),
                        table_data: self.table_data.view(),
                        wire_delay: self.wire_delay.view(),
                        wire_impulse: self.wire_impulse.view(),
                        arrival: self.arrival.cells(),
                        slew: self.slew.cells(),
                        arc_delay: self.arc_delay.cells(),
                    },
                ),
                Order::Backward => self.gpu.launch(
                    LaunchShape {
                        shared_bytes: backward_level_shared_bytes(shape.threads_per_block),
                        ..shape
                    },
                    BackwardLevelArgs {
                        level,
                        arc_delay: self.arc_delay.view(),
                        seed: self.seed.view(),
                        required: self.required.cells(),
                    },
                ),
            }
        };
        match order {
            Order::Forward => (0..n_levels).try_for_each(|index| launch(level(index))),
            Order::Backward => (0..n_levels)
                .rev()
                .try_for_each(|index| launch(level(index))),
        }
    }

    /// Copies the results of [`DeviceTiming::run_forward`] back (waits for them), and
    /// the RC pass's values into `wire` when given (each array as long as the layout's
    /// count). The parasitics results are final before the forward levels start, and
    /// the arrivals, slews and delays before the tests are evaluated, so they come back
    /// on the copy stream while the main stream still computes; the test results come
    /// last. Each array of `reuse` as long as the device's is written in place (a host
    /// array kept from an earlier update has its pages mapped already: at 1M gates
    /// about 400 MB the copy would otherwise fault in); the others come back as new
    /// vectors.
    /// Without `values` the arrivals, slews and arc delays stay on the device (those of
    /// `reuse` come back as they were): [`DeviceTiming::values_at`] gathers the few a
    /// host step reads, [`DeviceTiming::download_values`] brings one back whole later.
    pub fn download_forward(
        &self,
        wire: Option<WireOutputs<'_>>,
        mut reuse: ForwardResults,
        values: &[ForwardArray],
    ) -> Result<ForwardResults, GpuError> {
        let gpu = &self.gpu;
        if let Some(wire) = wire {
            let copy = |from: &DeviceBuffer<[f64; 4]>, to: &mut [[f64; 4]]| {
                check_length("download", from.len(), to.len())?;
                gpu.download_into_after(&self.parasitics_done, from, to)
            };
            copy(&self.net_load, wire.net_load)?;
            copy(&self.wire_delay, wire.wire_delay)?;
            copy(&self.wire_impulse, wire.wire_impulse)?;
        }
        let after_levels = |buffer: &DeviceBuffer<[f64; 4]>, mut kept: Vec<[f64; 4]>| {
            if kept.len() == buffer.len() {
                gpu.download_into_after(&self.levels_done, buffer, &mut kept)?;
                return Ok(kept);
            }
            drop(kept);
            gpu.download_after(&self.levels_done, buffer, buffer.len())
        };
        // In this order (the arrivals first); the others left as they were in `reuse`.
        for which in ForwardArray::ALL {
            if values.contains(&which) {
                let kept = std::mem::take(reuse.values_mut(which));
                *reuse.values_mut(which) = after_levels(self.values_of(which), kept)?;
            }
        }
        let ForwardResults {
            arrival,
            slew,
            arc_delay,
            ..
        } = reuse;
        let test_required = if self.tests_evaluated {
            Some(match reuse.test_required {
                Some(mut kept) if kept.len() == self.test_required.len() => {
                    gpu.download_into(&self.test_required, &mut kept)?;
                    kept
                }
                _ => gpu.download(&self.test_required, 0..self.test_required.len())?,
            })
        } else {
            None
        };
        Ok(ForwardResults {
            arrival,
            slew,
            arc_delay,
            test_required,
        })
    }

    /// Whether the forward values here (arrivals, slews, arc delays) and the required
    /// times are the host's but for what the host changed since; see
    /// [`DeviceTiming::keep_forward_values`].
    pub fn values_kept(&self) -> (bool, bool) {
        (self.forward_kept, self.required_kept)
    }

    /// Records that the host took every forward value (`forward`) or every required
    /// time (`!forward`) of the last step.
    pub fn all_values_taken(&mut self, forward: bool) {
        match forward {
            true => self.forward_kept = true,
            false => self.required_kept = true,
        }
    }

    /// The next step brings every value back ([`DeviceTiming::values_kept`] false).
    pub fn forget_values(&mut self) {
        self.forward_kept = false;
        self.required_kept = false;
    }

    /// Copies of the arrivals, slews and arc delays as they are, queued before the
    /// next [`DeviceTiming::run_forward`]: what [`DeviceTiming::forward_changes`]
    /// compares its results with.
    pub fn keep_forward_values(&self) -> Result<KeptValues, GpuError> {
        const DURING: &str = "keeping the values before an update";
        Ok(KeptValues {
            first: self.gpu.duplicate(DURING, &self.arrival)?,
            second: Some(self.gpu.duplicate(DURING, &self.slew)?),
            third: Some(self.gpu.duplicate(DURING, &self.arc_delay)?),
        })
    }

    /// A copy of the required times as they are, before the next
    /// [`DeviceTiming::run_backward`].
    pub fn keep_required(&self) -> Result<KeptValues, GpuError> {
        const DURING: &str = "keeping the values before an update";
        Ok(KeptValues {
            first: self.gpu.duplicate(DURING, &self.required)?,
            second: None,
            third: None,
        })
    }

    /// The bits of the items of `new` that differ from `old` (downloaded; waits).
    fn changed_bits(
        &self,
        old: &DeviceBuffer<[f64; 4]>,
        new: &DeviceBuffer<[f64; 4]>,
    ) -> Result<Vec<u32>, GpuError> {
        const DURING: &str = "comparing values on the device";
        let n_words = tachyon_kernels::changes::n_words(new.len());
        if n_words == 0 {
            return Ok(Vec::new());
        }
        let words = self.gpu.allocate::<u32>(DURING, n_words)?;
        self.gpu.launch(
            per_item(n_words),
            ChangedWordsArgs {
                old: old.view(),
                new: new.view(),
                words: words.cells(),
            },
        )?;
        self.gpu.download(&words, 0..n_words)
    }

    /// The values of `values` at `index` (each in range), downloaded.
    fn gathered(
        &self,
        index: &DeviceBuffer<u32>,
        values: &DeviceBuffer<[f64; 4]>,
    ) -> Result<Vec<[f64; 4]>, GpuError> {
        const DURING: &str = "bringing back changed values";
        if index.is_empty() {
            return Ok(Vec::new());
        }
        let out = self.gpu.allocate::<[f64; 4]>(DURING, index.len())?;
        self.gather_into(index, values, &out)?;
        self.gpu.download(&out, 0..index.len())
    }

    /// Queues the gathering of the values of `values` at `index` into `out` (as long).
    fn gather_into(
        &self,
        index: &DeviceBuffer<u32>,
        values: &DeviceBuffer<[f64; 4]>,
        out: &DeviceBuffer<[f64; 4]>,
    ) -> Result<(), GpuError> {
        self.gpu.launch(
            per_item(index.len()),
            GatherQuadsArgs {
                index: index.view(),
                values: values.view(),
                out: out.cells(),
            },
        )
    }

    /// After [`DeviceTiming::run_forward`] (the values before it in `kept`): the pins
    /// whose arrival or slew and the arcs whose delay differ from the kept ones, with
    /// `host_pins` and `host_arcs` (the host changed those since; sorted, each once),
    /// and their new values; the tests' results whole. Waits for the step. `None` when
    /// they are more than one in [`MOST_VALUES`] (bringing every value back costs less).
    pub fn forward_changes(
        &self,
        kept: KeptValues,
        host_pins: &[u32],
        host_arcs: &[u32],
    ) -> Result<Option<crate::ForwardChanges>, GpuError> {
        const DURING: &str = "bringing back changed values";
        check_indices("host pins", host_pins, self.n_pins)?;
        check_indices("host arcs", host_arcs, self.arc_delay.len())?;
        let (Some(slew), Some(arc_delay)) = (&kept.second, &kept.third) else {
            return Err(LayoutError::Missing {
                what: "kept forward values",
            }
            .into());
        };
        let mut pin_words = self.changed_bits(&kept.first, &self.arrival)?;
        let slew_words = self.changed_bits(slew, &self.slew)?;
        for (word, slew_word) in pin_words.iter_mut().zip(slew_words) {
            *word |= slew_word;
        }
        let arc_words = self.changed_bits(arc_delay, &self.arc_delay)?;
        drop(kept);
        let count = |words: &[u32]| words.iter().map(|word| word.count_ones() as usize).sum();
        let (n_pins, n_arcs): (usize, usize) = (count(&pin_words), count(&arc_words));
        if most(n_pins + host_pins.len(), self.n_pins)
            || most(n_arcs + host_arcs.len(), self.arc_delay.len())
        {
            // Most values changed: every value comes back (the caller's download).
            return Ok(None);
        }
        let pins = HostValueChanges::items_of(&pin_words, host_pins);
        let arcs = HostValueChanges::items_of(&arc_words, host_arcs);
        let pin_index = self.gpu.upload(DURING, &pins)?;
        let arc_index = self.gpu.upload(DURING, &arcs)?;
        let arrival = self.gathered(&pin_index, &self.arrival)?;
        let slew = self.gathered(&pin_index, &self.slew)?;
        let arc_delay = self.gathered(&arc_index, &self.arc_delay)?;
        let test_required = if self.tests_evaluated {
            Some(
                self.gpu
                    .download(&self.test_required, 0..self.test_required.len())?,
            )
        } else {
            None
        };
        Ok(Some(crate::ForwardChanges {
            pins,
            arrival,
            slew,
            arcs,
            arc_delay,
            test_required,
        }))
    }

    /// After [`DeviceTiming::run_backward`] (the required times before it in `kept`):
    /// the pins whose required time differs from the kept one, with `host_pins` (the
    /// host changed those since; sorted, each once), and their new required times;
    /// `None` when they are more than one in [`MOST_VALUES`].
    pub fn required_changes(
        &self,
        kept: KeptValues,
        host_pins: &[u32],
    ) -> Result<Option<ListedValues>, GpuError> {
        const DURING: &str = "bringing back changed values";
        check_indices("host pins", host_pins, self.n_pins)?;
        let words = self.changed_bits(&kept.first, &self.required)?;
        drop(kept);
        let n_changed: usize = words.iter().map(|word| word.count_ones() as usize).sum();
        if most(n_changed + host_pins.len(), self.n_pins) {
            return Ok(None);
        }
        let pins = HostValueChanges::items_of(&words, host_pins);
        let index = self.gpu.upload(DURING, &pins)?;
        let required = self.gathered(&index, &self.required)?;
        Ok(Some((pins, required)))
    }

    /// The backward levels from `seeds` (`(pin, required)`, each pin once; every other
    /// pin starts with no value), after [`DeviceTiming::run_forward`].
    pub fn run_backward(&mut self, seeds: &[(u32, [f64; 4])]) -> Result<(), GpuError> {
        self.fill_no_value(&self.seed)?;
        let pins: Vec<u32> = seeds.iter().map(|entry| entry.0).collect();
        let values: Vec<[f64; 4]> = seeds.iter().map(|entry| entry.1).collect();
        self.scatter(&pins, &values, &self.seed)?;
        self.sweep(Order::Backward)
    }

    /// The backward levels from the seeds of `layout` over the tests' results `tests`
    /// and the arrivals here (every other pin starts with no value), after
    /// [`DeviceTiming::run_forward`]: [`DeviceTiming::run_backward`] without the host's
    /// seed list.
    pub fn run_backward_seeded(
        &mut self,
        layout: &DeviceSeeds,
        tests: &[tachyon_kernels::seeds::TestSeedInputs],
    ) -> Result<(), GpuError> {
        const DURING: &str = "uploading the tests' results";
        check_length("seeded graph's pins", self.n_pins, layout.n_pins)?;
        layout.check_tests(tests)?;
        self.fill_no_value(&self.seed)?;
        if !layout.is_empty() {
            let tests = self.gpu.upload(DURING, tests)?;
            self.gpu.launch(
                per_item(layout.len()),
                RequiredSeedsArgs {
                    pins: layout.pins.view(),
                    initial: layout.initial.view(),
                    term_start: layout.term_start.view(),
                    terms: layout.terms.view(),
                    tests: tests.view(),
                    arrival: self.arrival.view(),
                    seed: self.seed.cells(),
                },
            )?;
        }
        self.sweep(Order::Backward)
    }

    /// Copies the required times back (waits for the backward levels): into `kept`
    /// when it is as long as the pins (written in place), else as a new vector.
    pub fn download_required(&self, mut kept: Vec<[f64; 4]>) -> Result<Vec<[f64; 4]>, GpuError> {
        if kept.len() == self.n_pins {
            self.gpu.download_into(&self.required, &mut kept)?;
            return Ok(kept);
        }
        drop(kept);
        self.gpu.download(&self.required, 0..self.n_pins)
    }

    /// The device's array of `which`.
    fn values_of(&self, which: ForwardArray) -> &DeviceBuffer<[f64; 4]> {
        match which {
            ForwardArray::Arrival => &self.arrival,
            ForwardArray::Slew => &self.slew,
            ForwardArray::ArcDelay => &self.arc_delay,
        }
    }

    /// Copies the array `which` of the forward levels back (waits for them): into `kept`
    /// when it is as long (written in place), else as a new vector.
    pub fn download_values(
        &self,
        which: ForwardArray,
        mut kept: Vec<[f64; 4]>,
    ) -> Result<Vec<[f64; 4]>, GpuError> {
        let values = self.values_of(which);
        if kept.len() == values.len() {
            self.gpu.download_into(values, &mut kept)?;
            return Ok(kept);
        }
        drop(kept);
        self.gpu.download(values, 0..values.len())
    }

    /// The values of `which` at `index` (each in range: pins, or arcs for the delays),
    /// gathered on the device and downloaded (waits for the forward levels).
    pub fn values_at(&self, which: ForwardArray, index: &[u32]) -> Result<Vec<[f64; 4]>, GpuError> {
        self.listed("listed pins or arcs", index, self.values_of(which))
    }

    /// [`DeviceTiming::values_at`] into `into` (written in place when it is as long as
    /// `index` already: an array kept across updates has its pages mapped).
    pub fn values_at_into(
        &self,
        which: ForwardArray,
        index: &[u32],
        into: &mut Vec<[f64; 4]>,
    ) -> Result<(), GpuError> {
        const DURING: &str = "bringing back the values of listed items";
        let values = self.values_of(which);
        if index.is_empty() || into.len() != index.len() {
            *into = self.listed("listed pins or arcs", index, values)?;
            return Ok(());
        }
        check_indices("listed pins or arcs", index, values.len())?;
        let index = self.gpu.upload(DURING, index)?;
        let gathered = self.gpu.allocate::<[f64; 4]>(DURING, index.len())?;
        self.gather_into(&index, values, &gathered)?;
        self.gpu.download_into(&gathered, into)
    }

    /// The required times of `pins` (each in range), gathered on the device and
    /// downloaded (waits for the backward levels): a query of a few pins reads those
    /// alone.
    pub fn required_at(&self, pins: &[u32]) -> Result<Vec<[f64; 4]>, GpuError> {
        self.listed("listed pins", pins, &self.required)
    }

    /// The values of `values` at `items` (each in range), gathered and downloaded.
    fn listed(
        &self,
        what: &'static str,
        items: &[u32],
        values: &DeviceBuffer<[f64; 4]>,
    ) -> Result<Vec<[f64; 4]>, GpuError> {
        const DURING: &str = "bringing back the values of listed items";
        if items.is_empty() {
            return Ok(Vec::new());
        }
        check_indices(what, items, values.len())?;
        let index = self.gpu.upload(DURING, items)?;
        self.gathered(&index, values)
    }

    /// Sets every value of `buffer` to the canonical NaN ("no value").
    fn fill_no_value(&self, buffer: &DeviceBuffer<[f64; 4]>) -> Result<(), GpuError> {
        let out = buffer.cells().flatten();
        self.gpu.launch(
            per_item(out.len()),
            FillArgs {
                out,
                value: f64::NAN,
            },
        )
    }

    /// Writes `values[i]` to pin `pins[i]` of `target` (each pin once).
    fn scatter(
        &self,
        pins: &[u32],
        values: &[[f64; 4]],
        target: &DeviceBuffer<[f64; 4]>,
    ) -> Result<(), GpuError> {
        const DURING: &str = "uploading per-pin values";
        if pins.is_empty() {
            return Ok(());
        }
        check_length("scattered values", pins.len(), values.len())?;
        check_indices("scattered pins", pins, target.len())?;
        let index = self.gpu.upload(DURING, pins)?;
        let values = self.gpu.upload(DURING, values)?;
        self.gpu.launch(
            per_item(pins.len()),
            ScatterQuadsArgs {
                index: index.view(),
                values: values.view(),
                out: target.cells(),
            },
        )
    }
}
