//! Full timing on the GPU: a flat timing graph uploaded once and levelized there
//! (frontier by frontier, `tachyon_kernels::levelize`), then the RC pass, the forward
//! levels and the test evaluation, and (after CPPR) the backward levels, with every
//! value staying on the device between phases. The per-pin arithmetic is
//! `tachyon_kernels::propagate`, the same functions the CPU backend runs.

use std::sync::Arc;

use rayon::prelude::*;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaEvent, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg,
};
use tachyon_kernels::propagate::{FlatGraph, LevelLaunch, TestDescriptor, NONE};
use tachyon_kernels::N_CONDITIONS;

use crate::batch::{check_length, BatchError, RcNetBatch};
use crate::context::{CapturedGraph, DeviceRcNets, GpuContext};
use crate::error::{DuringExt, GpuError};

/// Whether `TACHYON_GPU_SYNC_STEPS` is set: a diagnostics switch that runs the steps of
/// an update one after the other (host steps that normally overlap, GPU work waited
/// for), so that the debug log times each alone. Figures are taken without it.
pub fn sync_steps() -> bool {
    static SYNC_STEPS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SYNC_STEPS.get_or_init(|| std::env::var_os("TACHYON_GPU_SYNC_STEPS").is_some())
}

/// Threads per block of the per-pin (and per-entry) launches.
const THREADS_PER_BLOCK: u32 = 128;

/// Everything the GPU needs to time one graph (all indices `u32`, "none" is
/// [`NONE`]). `tachyon-gba` builds it from a `TimingGraph`.
#[derive(Debug, Clone, Copy)]
pub struct TimingLayout<'a> {
    pub graph: FlatGraph<'a>,
    /// The primary inputs, each once: their values are assertions, so the forward step
    /// leaves them out. The levels themselves are computed on the GPU.
    pub primary_inputs: &'a [u32],
    pub tests: &'a [TestDescriptor],
    /// The nets (the length of the per-net arrays of [`ParasiticsLayout`]).
    pub n_nets: u32,
}

/// The parasitics of a [`TimingLayout`]'s graph, uploaded after it (so that the host can
/// build them while the graph is being copied).
#[derive(Debug, Clone, Copy)]
pub struct ParasiticsLayout<'a> {
    /// RC trees of the nets with parasitics.
    pub rc: &'a RcNetBatch,
    /// Per pin, the RC node its wire delay comes from.
    pub pin_source: &'a [u32],
    /// Per net, its root RC node, or [`NONE`] to take `net_lumped`.
    pub net_root: &'a [u32],
    pub net_lumped: &'a [[f64; 4]],
}

/// `error` of a piece of an array whose first item is at `first`, as an error of the
/// whole array.
pub(crate) fn shifted(error: BatchError, first: usize) -> BatchError {
    match error {
        BatchError::IndexOutOfRange {
            array,
            position,
            value,
            limit,
        } => BatchError::IndexOutOfRange {
            array,
            position: first + position,
            value,
            limit,
        },
        other => other,
    }
}

/// Items each parallel task of the layout checks scans.
pub(crate) const CHECK_CHUNK: usize = 1 << 14;

pub(crate) fn check_indices(
    array: &'static str,
    values: &[u32],
    limit: usize,
) -> Result<(), BatchError> {
    check_indices_or_none(array, values, limit, false)
}

pub(crate) fn check_indices_or_none(
    array: &'static str,
    values: &[u32],
    limit: usize,
    none_allowed: bool,
) -> Result<(), BatchError> {
    // Long arrays in parallel (the layouts of million-gate designs have tens of
    // millions of indices), short ones (an arc's pins, called per arc) in place; the
    // first bad position either way.
    let bad = |&value: &u32| (value as usize >= limit) && !(none_allowed && value == NONE);
    let first_bad = if values.len() < CHECK_CHUNK {
        values.iter().position(bad)
    } else {
        // Chunk by chunk: searching item by item paid rayon's bookkeeping per item
        // (1M gates, 2 cores: 33 ms for the 5.9M fan-in arcs, now 3 ms); a chunk is
        // scanned without early exit, which the compiler vectorises.
        values
            .par_chunks(CHECK_CHUNK)
            .position_first(|chunk| chunk.iter().fold(false, |found, value| found | bad(value)))
            .and_then(|chunk| {
                let start = chunk * CHECK_CHUNK;
                values[start..]
                    .iter()
                    .position(bad)
                    .map(|offset| start + offset)
            })
    };
    match first_bad {
        None => Ok(()),
        Some(position) => Err(BatchError::IndexOutOfRange {
            array,
            position,
            value: values[position],
            limit,
        }),
    }
}

pub(crate) fn check_starts(
    array: &'static str,
    starts: &[u32],
    end: usize,
) -> Result<(), BatchError> {
    let ascending = starts
        .par_windows(2)
        .with_min_len(1 << 14)
        .all(|pair| pair[0] <= pair[1]);
    if starts.first() == Some(&0) && ascending && starts.last().copied() == Some(end as u32) {
        Ok(())
    } else {
        Err(BatchError::BadStarts { array, end })
    }
}

impl TimingLayout<'_> {
    pub fn n_pins(&self) -> usize {
        self.graph.pin_net.len()
    }

    pub fn n_nets(&self) -> usize {
        self.n_nets as usize
    }

    /// Checks that every index is in range, so that no launch reads or writes out of
    /// bounds.
    pub fn validate(&self) -> Result<(), BatchError> {
        self.validate_all_but_long_arrays()?;
        let graph = &self.graph;
        self.check_arc_ids("fanin_arcs", 0, graph.fanin_arcs)?;
        self.check_arc_ids("fanout_arcs", 0, graph.fanout_arcs)?;
        self.check_arcs(0, graph.arcs.as_flattened())?;
        self.check_pin_nets(0, graph.pin_net)
    }

    /// The indices of the long arrays, checked piece by piece as they are uploaded
    /// ([`GpuContext::upload_checked`]): `first` is the position of the piece's first
    /// item in its array.
    /// A piece of a CSR's arc list (`array`: `fanin_arcs` or `fanout_arcs`).
    fn check_arc_ids(
        &self,
        array: &'static str,
        first: usize,
        piece: &[u32],
    ) -> Result<(), BatchError> {
        check_indices(array, piece, self.graph.arcs.len()).map_err(|e| shifted(e, first))
    }

    /// Arcs as their eight words each (a piece holds whole arcs).
    fn check_arcs(&self, _first: usize, piece: &[u32]) -> Result<(), BatchError> {
        let (n_pins, n_tables) = (self.n_pins(), self.graph.tables.len());
        if piece.len() % 8 != 0 {
            return Err(BatchError::BadStarts {
                array: "arcs (eight words each)",
                end: piece.len(),
            });
        }
        let check_arc = |arc: &[u32]| {
            check_indices("arc pins", &arc[0..2], n_pins)?;
            check_indices_or_none("arc tables", &arc[3..7], n_tables, true)
        };
        check_each(piece, 8, check_arc)
    }

    fn check_pin_nets(&self, first: usize, piece: &[u32]) -> Result<(), BatchError> {
        check_indices_or_none("pin_net", piece, self.n_nets(), true).map_err(|e| shifted(e, first))
    }

    /// Everything [`TimingLayout::validate`] checks but the indices of the long arrays.
    fn validate_all_but_long_arrays(&self) -> Result<(), BatchError> {
        let graph = &self.graph;
        let (n_pins, n_nets, n_arcs) = (self.n_pins(), self.n_nets(), graph.arcs.len());
        let n_tables = graph.tables.len();
        for limit in [n_pins, n_nets, n_arcs, n_tables, graph.table_data.len()] {
            if limit >= NONE as usize {
                return Err(BatchError::TooLarge {
                    what: "layout entries",
                    count: limit,
                    limit: NONE as usize - 1,
                });
            }
        }
        check_length("fanin_start", n_pins + 1, graph.fanin_start.len())?;
        check_length("fanout_start", n_pins + 1, graph.fanout_start.len())?;
        check_starts("fanin_start", graph.fanin_start, graph.fanin_arcs.len())?;
        check_starts("fanout_start", graph.fanout_start, graph.fanout_arcs.len())?;
        for (table, &[offset, n1, n2, _]) in graph.tables.iter().enumerate() {
            let length = tachyon_kernels::lut::storage_len(n1 as usize, n2 as usize);
            if offset as usize + length > graph.table_data.len() {
                return Err(BatchError::IndexOutOfRange {
                    array: "table extents",
                    position: table,
                    value: offset,
                    limit: graph.table_data.len(),
                });
            }
        }
        let check_test = |test: &[u32]| {
            check_indices("test pins", &test[0..2], n_pins)?;
            check_indices_or_none("test tables", &test[3..5], n_tables, true)
        };
        check_each(self.tests.as_flattened(), 6, check_test)?;
        check_indices("primary_inputs", self.primary_inputs, n_pins)?;
        let mut seen = vec![false; n_pins];
        for (position, &pin) in self.primary_inputs.iter().enumerate() {
            if std::mem::replace(&mut seen[pin as usize], true) {
                return Err(BatchError::IndexOutOfRange {
                    array: "primary_inputs (listed twice)",
                    position,
                    value: pin,
                    limit: n_pins,
                });
            }
        }
        Ok(())
    }

    /// Device bytes the layout and its values take.
    pub fn device_bytes(&self) -> u64 {
        let graph = &self.graph;
        let words = graph.fanin_start.len()
            + graph.fanin_arcs.len()
            + graph.fanout_start.len()
            + graph.fanout_arcs.len()
            + graph.arcs.len() * 8
            + graph.pin_net.len()
            + graph.tables.len() * 4
            + self.tests.len() * 6
            + self.n_pins() * 2
            + self.primary_inputs.len();
        let doubles = graph.table_data.len()
            + self.n_nets() * 4
            + self.n_pins() * 4 * 7
            + graph.arcs.len() * 4
            + self.tests.len() * 2;
        words as u64 * 4 + doubles as u64 * 8
    }
}

impl ParasiticsLayout<'_> {
    /// Checks the arrays against the graph's `n_pins` and `n_nets` and the RC nodes.
    pub fn validate(&self, n_pins: usize, n_nets: usize) -> Result<(), BatchError> {
        let n_nodes = self.rc.n_nodes() as usize;
        if n_nodes >= NONE as usize {
            return Err(BatchError::TooLarge {
                what: "RC nodes",
                count: n_nodes,
                limit: NONE as usize - 1,
            });
        }
        check_length("pin_source", n_pins, self.pin_source.len())?;
        check_indices_or_none("pin_source", self.pin_source, n_nodes, true)?;
        check_length("net_root", n_nets, self.net_root.len())?;
        check_indices_or_none("net_root", self.net_root, n_nodes, true)?;
        check_length("net_lumped", n_nets, self.net_lumped.len())?;
        Ok(())
    }

    /// Device bytes the parasitics take.
    pub fn device_bytes(&self) -> u64 {
        let words = self.pin_source.len() + self.net_root.len();
        let doubles = self.net_lumped.len() * 4;
        words as u64 * 4
            + doubles as u64 * 8
            + GpuContext::rc_nets_bytes(self.rc.n_nets(), self.rc.n_nodes())
    }
}

/// The parasitics on the GPU.
struct DeviceParasitics {
    rc: DeviceRcNets,
    pin_source: CudaSlice<u32>,
    net_root: CudaSlice<u32>,
    net_lumped: CudaSlice<f64>,
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

/// Where [`DeviceTiming::download_forward`] puts the RC pass's values: per net, per pin.
#[derive(Debug)]
pub struct WireOutputs<'a> {
    pub net_load: &'a mut [[f64; 4]],
    pub wire_delay: &'a mut [[f64; 4]],
    pub wire_impulse: &'a mut [[f64; 4]],
}

/// A timing graph on the GPU with its values.
pub struct DeviceTiming {
    context: Arc<GpuContext>,
    n_pins: u32,
    n_nets: u32,
    n_arcs: u32,
    n_tests: u32,
    n_tables: u32,
    n_fanin: u32,
    n_fanout: u32,
    table_data_len: u64,
    /// The forward sweep (fan-in, pins without primary inputs) and the backward sweep
    /// (fan-out, all pins), set once the buffers they address are uploaded.
    forward_levels: Levels,
    backward_levels: Levels,
    tests_evaluated: bool,
    fanin_start: CudaSlice<u32>,
    fanin_arcs: CudaSlice<u32>,
    fanout_start: CudaSlice<u32>,
    fanout_arcs: CudaSlice<u32>,
    arcs: CudaSlice<u32>,
    pin_net: CudaSlice<u32>,
    tables: CudaSlice<u32>,
    table_data: CudaSlice<f64>,
    tests: CudaSlice<u32>,
    /// All pins by level, computed on the GPU ([`DeviceTiming::levelize`]); the primary
    /// inputs come first, so the forward sweep's pins are the rest.
    level_pins: CudaSlice<u32>,
    /// Set by [`DeviceTiming::upload_parasitics`].
    parasitics: Option<DeviceParasitics>,
    net_load: CudaSlice<f64>,
    wire_delay: CudaSlice<f64>,
    wire_impulse: CudaSlice<f64>,
    arrival: CudaSlice<f64>,
    slew: CudaSlice<f64>,
    arc_delay: CudaSlice<f64>,
    test_required: CudaSlice<f64>,
    seed: CudaSlice<f64>,
    required: CudaSlice<f64>,
    /// Recorded on the context's stream after the last writes of the per-net and
    /// per-pin parasitics results, and after the forward levels: the copy stream waits
    /// on them to download those results while the stream computes on.
    parasitics_done: CudaEvent,
    levels_done: CudaEvent,
    /// Whether the level sweeps run as CUDA graphs (captured on first use, then
    /// replayed) rather than as one launch per level.
    use_graphs: bool,
    forward_graph: Option<CapturedGraph>,
    backward_graph: Option<CapturedGraph>,
}

/// A one-dimensional launch of at least `n_threads` threads (one block when 0).
/// The timing data on the device that a CPPR network is filled from
/// ([`DeviceTiming::cppr_values`]): the GPU, the pin and arc counts, and the arc delays,
/// arrivals and slews (`[f64; 4]` each).
#[derive(Clone, Copy)]
pub struct CpprValues<'a> {
    pub(crate) context: &'a Arc<GpuContext>,
    pub(crate) n_pins: u32,
    pub(crate) n_arcs: u32,
    pub(crate) arc_delay: &'a CudaSlice<f64>,
    pub(crate) arrival: &'a CudaSlice<f64>,
    pub(crate) slew: &'a CudaSlice<f64>,
}

impl std::fmt::Debug for CpprValues<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("CpprValues")
            .field("gpu", &self.context.ordinal())
            .field("n_pins", &self.n_pins)
            .field("n_arcs", &self.n_arcs)
            .finish_non_exhaustive()
    }
}

pub(crate) fn grid(n_threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n_threads.div_ceil(THREADS_PER_BLOCK).max(1), 1, 1),
        block_dim: (THREADS_PER_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl DeviceTiming {
    /// What a CPPR network's fill reads on the device (the arc delays, arrivals and
    /// slews of the forward phase), shareable between host threads.
    pub fn cppr_values(&self) -> CpprValues<'_> {
        CpprValues {
            context: &self.context,
            n_pins: self.n_pins,
            n_arcs: self.n_arcs,
            arc_delay: &self.arc_delay,
            arrival: &self.arrival,
            slew: &self.slew,
        }
    }

    /// Validates `layout`, checks that it fits the GPU's free memory (an
    /// [`GpuError::OutOfMemory`] saying how much is needed otherwise) and uploads it.
    pub fn upload(
        context: &Arc<GpuContext>,
        layout: &TimingLayout<'_>,
    ) -> Result<DeviceTiming, GpuError> {
        const DURING: &str = "uploading the timing graph";
        let started = std::time::Instant::now();
        context.ensure_free(DURING, layout.device_bytes())?;
        // The layout is validated while it is copied, the long index arrays piece by
        // piece by the threads that copy them (a second pass over them took 11 ms alone
        // at 1M gates on 16 cores, 30-35 ms beside the other host work): copies of
        // unchecked indices are harmless as long as no kernel reads them, and the first
        // kernel (levelization) runs only once every check has passed.
        let ms_since = |instant: std::time::Instant| instant.elapsed().as_secs_f64() * 1e3;
        let validate = || (layout.validate_all_but_long_arrays(), ms_since(started));
        let copy = || Self::copy_layout(context, layout).map(|timing| (timing, ms_since(started)));
        let (validated, copied) = if sync_steps() {
            let validated = validate();
            (validated, copy())
        } else {
            rayon::join(validate, copy)
        };
        let (validation, validated_ms) = validated;
        validation.map_err(GpuError::Layout)?;
        let (mut timing, copied_ms) = copied?;
        let levelize_started = std::time::Instant::now();
        let level_start = timing.levelize(layout.primary_inputs)?;
        tracing::debug!(
            levels = level_start.len() - 1,
            validated_ms,
            copied_ms,
            ms = levelize_started.elapsed().as_secs_f64() * 1e3,
            "levelized on the GPU (validated while copied)"
        );
        // The forward sweep starts after the primary inputs (the head of level 0).
        let n_primary_inputs = layout.primary_inputs.len() as u32;
        let forward_start: Vec<u32> = level_start
            .iter()
            .map(|&start| start.max(n_primary_inputs) - n_primary_inputs)
            .collect();
        timing.forward_levels = timing.levels(Order::Forward, &forward_start, n_primary_inputs);
        timing.backward_levels = timing.levels(Order::Backward, &level_start, 0);
        // Until the first passes record them, the events stand behind the allocations'
        // fills, so a download on the copy stream never reads a buffer being filled.
        timing
            .parasitics_done
            .record(context.stream())
            .during(DURING)?;
        timing.levels_done.record(context.stream()).during(DURING)?;
        Ok(timing)
    }

    /// The device buffers of `layout`: its arrays copied, the per-pin and per-arc
    /// results allocated (not validated: [`DeviceTiming::upload`] does that).
    fn copy_layout(
        context: &Arc<GpuContext>,
        layout: &TimingLayout<'_>,
    ) -> Result<DeviceTiming, GpuError> {
        const DURING: &str = "uploading the timing graph";
        let graph = &layout.graph;
        let n_pins = layout.n_pins();
        let quads = |n: usize| n * N_CONDITIONS;
        let upload_u32 = |data: &[u32]| context.upload(DURING, data);
        Ok(DeviceTiming {
            context: Arc::clone(context),
            n_pins: n_pins as u32,
            n_nets: layout.n_nets() as u32,
            n_arcs: graph.arcs.len() as u32,
            n_tests: layout.tests.len() as u32,
            n_tables: graph.tables.len() as u32,
            n_fanin: graph.fanin_arcs.len() as u32,
            n_fanout: graph.fanout_arcs.len() as u32,
            table_data_len: graph.table_data.len() as u64,
            forward_levels: Levels::default(),
            backward_levels: Levels::default(),
            tests_evaluated: false,
            fanin_start: upload_u32(graph.fanin_start)?,
            fanin_arcs: context.upload_checked(DURING, graph.fanin_arcs, &|first, piece| {
                layout.check_arc_ids("fanin_arcs", first, piece)
            })?,
            fanout_start: upload_u32(graph.fanout_start)?,
            fanout_arcs: context.upload_checked(DURING, graph.fanout_arcs, &|first, piece| {
                layout.check_arc_ids("fanout_arcs", first, piece)
            })?,
            arcs: context.upload_checked(DURING, graph.arcs.as_flattened(), &|first, piece| {
                layout.check_arcs(first, piece)
            })?,
            pin_net: context.upload_checked(DURING, graph.pin_net, &|first, piece| {
                layout.check_pin_nets(first, piece)
            })?,
            tables: upload_u32(graph.tables.as_flattened())?,
            table_data: context.upload(DURING, graph.table_data)?,
            tests: upload_u32(layout.tests.as_flattened())?,
            level_pins: context.allocate_poisoned(DURING, n_pins)?,
            parasitics: None,
            net_load: context.allocate_poisoned(DURING, quads(layout.n_nets()))?,
            wire_delay: context.allocate_poisoned(DURING, quads(n_pins))?,
            wire_impulse: context.allocate_poisoned(DURING, quads(n_pins))?,
            arrival: context.allocate_poisoned(DURING, quads(n_pins))?,
            slew: context.allocate_poisoned(DURING, quads(n_pins))?,
            arc_delay: context.allocate_poisoned(DURING, quads(graph.arcs.len()))?,
            test_required: context.allocate_poisoned(DURING, layout.tests.len() * 2)?,
            seed: context.allocate_poisoned(DURING, quads(n_pins))?,
            required: context.allocate_poisoned(DURING, quads(n_pins))?,
            parasitics_done: new_event(context)?,
            levels_done: new_event(context)?,
            use_graphs: true,
            forward_graph: None,
            backward_graph: None,
        })
    }

    /// Validates and uploads the parasitics of the graph (replacing any uploaded before).
    pub fn upload_parasitics(&mut self, layout: &ParasiticsLayout<'_>) -> Result<(), GpuError> {
        const DURING: &str = "uploading the parasitics";
        layout
            .validate(self.n_pins as usize, self.n_nets as usize)
            .map_err(GpuError::Layout)?;
        self.parasitics = None;
        self.context.ensure_free(DURING, layout.device_bytes())?;
        self.parasitics = Some(DeviceParasitics {
            rc: self.context.upload_rc_nets(layout.rc)?,
            pin_source: self.context.upload(DURING, layout.pin_source)?,
            net_root: self.context.upload(DURING, layout.net_root)?,
            net_lumped: self
                .context
                .upload(DURING, layout.net_lumped.as_flattened())?,
        });
        Ok(())
    }

    /// The levels of the sweep in `order` (`starts` into its pins, which begin
    /// `first_pin` pins into `level_pins`) with what its launches share; the device
    /// addresses stay valid as long as `self`'s buffers.
    fn levels(&self, order: Order, starts: &[u32], first_pin: u32) -> Levels {
        let stream = self.context.stream();
        let (csr_start, csr_arcs, n_csr_arcs) = match order {
            Order::Forward => (&self.fanin_start, &self.fanin_arcs, self.n_fanin),
            Order::Backward => (&self.fanout_start, &self.fanout_arcs, self.n_fanout),
        };
        Levels {
            starts: starts.to_vec(),
            order,
            base: LevelLaunch {
                level_pins: device_address(&self.level_pins, stream) + u64::from(first_pin) * 4,
                csr_start: device_address(csr_start, stream),
                csr_arcs: device_address(csr_arcs, stream),
                arcs: device_address(&self.arcs, stream),
                n_level_pins: 0,
                n_pins: self.n_pins,
                n_csr_arcs,
                n_arcs: self.n_arcs,
            },
        }
    }

    /// Levelizes the uploaded graph on the GPU, frontier by frontier: every pin goes
    /// into `level_pins`, level by level, the primary inputs first (they head level 0).
    /// Returns the level starts (one more than the levels). Each frontier costs one
    /// launch and a 4-byte read of its successor's size.
    fn levelize(&mut self, primary_inputs: &[u32]) -> Result<Vec<u32>, GpuError> {
        const DURING: &str = "levelizing the graph";
        let kernels = self.context.kernels()?;
        let stream = self.context.stream();
        let n_pins = self.n_pins;
        let n_primary_inputs = primary_inputs.len() as u32;
        let mut remaining = self
            .context
            .allocate_poisoned::<u32>(DURING, n_pins as usize)?;
        let mut counter = self.context.allocate_poisoned::<u32>(DURING, 1)?;
        let mut launch = stream.launch_builder(&kernels.levelize_waits);
        launch
            .arg(&n_pins)
            .arg(&self.fanin_start)
            .arg(&mut remaining);
        // SAFETY: matches `ptx_entry::levelize_waits`; `fanin_start` was validated
        // (`n_pins + 1` ascending values) and `remaining` holds `n_pins` values.
        unsafe { launch.launch(grid(n_pins)) }.during("launching levelize_waits")?;
        self.context
            .copy_to_device(primary_inputs, &mut self.level_pins)?;
        if n_primary_inputs > 0 {
            let mut launch = stream.launch_builder(&kernels.levelize_exclude);
            launch
                .arg(&n_primary_inputs)
                .arg(&self.level_pins)
                .arg(&n_pins)
                .arg(&mut remaining);
            // SAFETY: matches `ptx_entry::levelize_exclude`; the layout's validation
            // checked that the primary inputs are distinct pins below `n_pins`, and
            // they were just copied to the head of `level_pins`.
            unsafe { launch.launch(grid(n_primary_inputs)) }
                .during("launching levelize_exclude")?;
        }
        let level_pins = device_address(&self.level_pins, stream);
        let read_counter = |counter: &CudaSlice<u32>| -> Result<u32, GpuError> {
            let mut count = [0u32];
            self.context.copy_to_host(counter, &mut count)?;
            Ok(count[0])
        };
        stream.memset_zeros(&mut counter).during(DURING)?;
        let (out, capacity) = (
            level_pins + u64::from(n_primary_inputs) * 4,
            n_pins - n_primary_inputs,
        );
        let mut launch = stream.launch_builder(&kernels.levelize_sources);
        launch
            .arg(&n_pins)
            .arg(&remaining)
            .arg(&capacity)
            .arg(&out)
            .arg(&mut counter);
        // SAFETY: matches `ptx_entry::levelize_sources`; `out` addresses the
        // `capacity` slots of `level_pins` after the primary inputs, and the counter
        // was zeroed.
        unsafe { launch.launch(grid(n_pins)) }.during("launching levelize_sources")?;
        let mut level_start = vec![0u32];
        let mut start = 0u32;
        let mut count = n_primary_inputs + read_counter(&counter)?;
        while count > 0 {
            let next = start + count;
            level_start.push(next);
            stream.memset_zeros(&mut counter).during(DURING)?;
            let (frontier, out, capacity) = (
                level_pins + u64::from(start) * 4,
                level_pins + u64::from(next) * 4,
                n_pins - next,
            );
            let mut launch = stream.launch_builder(&kernels.levelize_frontier);
            launch
                .arg(&count)
                .arg(&frontier)
                .arg(&n_pins)
                .arg(&self.fanout_start)
                .arg(&self.n_fanout)
                .arg(&self.fanout_arcs)
                .arg(&self.n_arcs)
                .arg(&self.arcs)
                .arg(&mut remaining)
                .arg(&capacity)
                .arg(&out)
                .arg(&mut counter);
            // SAFETY: matches `ptx_entry::levelize_frontier`; the frontier is the
            // `count` pins the previous step wrote at `start`, the output the slots
            // after them (no overlap), the CSR and arcs were validated, and every pin
            // is released at most once, so at most `capacity` pins are appended.
            unsafe { launch.launch(grid(count)) }.during("launching levelize_frontier")?;
            start = next;
            count = read_counter(&counter)?;
        }
        if start != n_pins {
            return Err(GpuError::NotAcyclic {
                levelized: start,
                n_pins,
            });
        }
        Ok(level_start)
    }

    /// The RC pass and the gathers that give every net its driver load and every pin
    /// its wire delay and impulse. Returns once queued.
    pub fn run_parasitics(&mut self) -> Result<(), GpuError> {
        let parasitics = self.parasitics.as_mut().ok_or(GpuError::NoParasitics)?;
        self.context.launch_rc_nets(&mut parasitics.rc)?;
        let kernels = self.context.kernels()?;
        let stream = self.context.stream();
        let n_threads = self.n_pins.max(self.n_nets);
        let mut launch = stream.launch_builder(&kernels.gather_parasitics);
        let n_nodes = parasitics.rc.n_nodes();
        launch
            .arg(&self.n_pins)
            .arg(&parasitics.pin_source)
            .arg(&self.n_nets)
            .arg(&parasitics.net_root)
            .arg(&parasitics.net_lumped)
            .arg(&n_nodes)
            .arg(parasitics.rc.load())
            .arg(parasitics.rc.delay())
            .arg(parasitics.rc.impulse())
            .arg(&mut self.net_load)
            .arg(&mut self.wire_delay)
            .arg(&mut self.wire_impulse);
        // SAFETY: matches `ptx_entry::gather_parasitics`; `ParasiticsLayout::validate`
        // checked the sources
        // and roots against the node count and the lengths of the per-pin and per-net
        // arrays, which were allocated from those counts.
        unsafe { launch.launch(grid(n_threads)) }.during("launching gather_parasitics")?;
        self.parasitics_done
            .record(stream)
            .during("recording an event")?;
        Ok(())
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
        fill_nan(&self.context, &mut self.arrival)?;
        fill_nan(&self.context, &mut self.slew)?;
        fill_nan(&self.context, &mut self.arc_delay)?;
        let pins: Vec<u32> = primary_inputs.iter().map(|entry| entry.0).collect();
        let arrivals: Vec<[f64; 4]> = primary_inputs.iter().map(|entry| entry.1).collect();
        let slews: Vec<[f64; 4]> = primary_inputs.iter().map(|entry| entry.2).collect();
        scatter(
            &self.context,
            self.n_pins,
            &pins,
            &arrivals,
            &mut self.arrival,
        )?;
        scatter(&self.context, self.n_pins, &pins, &slews, &mut self.slew)?;

        self.sweep(Order::Forward)?;
        let kernels = self.context.kernels()?;
        let stream = self.context.stream();
        self.levels_done
            .record(stream)
            .during("recording an event")?;

        self.tests_evaluated = false;
        if let (Some(period), true) = (period, self.n_tests > 0) {
            let mut launch = stream.launch_builder(&kernels.evaluate_tests);
            launch
                .arg(&self.tests)
                .arg(&self.n_tests)
                .arg(&period)
                .arg(&self.n_pins)
                .arg(&self.arrival)
                .arg(&self.slew)
                .arg(&self.tables)
                .arg(&self.n_tables)
                .arg(&self.table_data)
                .arg(&self.table_data_len)
                .arg(&mut self.test_required);
            // SAFETY: matches `ptx_entry::evaluate_tests`; test pins and tables were
            // checked by `validate`; `test_required` holds two values per test.
            unsafe { launch.launch(grid(self.n_tests)) }.during("launching evaluate_tests")?;
            self.tests_evaluated = true;
        }
        Ok(())
    }

    /// Whether the level sweeps run as CUDA graphs (the default) or as one launch per
    /// level; the results are the same.
    pub fn set_use_graphs(&mut self, use_graphs: bool) {
        self.use_graphs = use_graphs;
    }

    /// Runs the levels of one sweep: the captured graph (capturing it on first use) or
    /// the launches themselves. Every launch reads and writes buffers allocated at
    /// upload, so one graph serves every run.
    fn sweep(&mut self, order: Order) -> Result<(), GpuError> {
        if !self.use_graphs {
            return self.launch_levels(order);
        }
        let captured = match order {
            Order::Forward => self.forward_graph.is_some(),
            Order::Backward => self.backward_graph.is_some(),
        };
        if !captured {
            let context = Arc::clone(&self.context);
            let graph = context.capture(|| self.launch_levels(order))?;
            match order {
                Order::Forward => self.forward_graph = graph,
                Order::Backward => self.backward_graph = graph,
            }
        }
        let graph = match order {
            Order::Forward => &self.forward_graph,
            Order::Backward => &self.backward_graph,
        };
        match graph {
            Some(graph) => graph.launch(),
            None => Ok(()),
        }
    }

    /// Queues one launch per non-empty level of the sweep in `order`.
    fn launch_levels(&mut self, order: Order) -> Result<(), GpuError> {
        let kernels = self.context.kernels()?;
        let stream = self.context.stream();
        match order {
            Order::Forward => {
                self.forward_levels.for_each(|level| {
                    let mut launch = stream.launch_builder(&kernels.forward_level);
                    launch
                        .arg(&level)
                        .arg(&self.pin_net)
                        .arg(&self.net_load)
                        .arg(&self.n_nets)
                        .arg(&self.tables)
                        .arg(&self.n_tables)
                        .arg(&self.table_data)
                        .arg(&self.table_data_len)
                        .arg(&self.wire_delay)
                        .arg(&self.wire_impulse)
                        .arg(&mut self.arrival)
                        .arg(&mut self.slew)
                        .arg(&mut self.arc_delay);
                    // SAFETY: matches `ptx_entry::forward_level`; `validate` checked every index
                    // of the layout and the buffers were sized from its counts; the level's pins
                    // are distinct and their fan-in lies in earlier levels (the graph's
                    // levelization), so no thread reads what another writes in this launch.
                    unsafe { launch.launch(grid(level.0.n_level_pins)) }
                        .during("launching forward_level")
                        .map(drop)
                })?;
            }
            Order::Backward => {
                self.backward_levels.for_each(|level| {
                    let mut launch = stream.launch_builder(&kernels.backward_level);
                    launch
                        .arg(&level)
                        .arg(&self.arc_delay)
                        .arg(&self.seed)
                        .arg(&mut self.required);
                    // SAFETY: matches `ptx_entry::backward_level`; indices validated, buffers
                    // sized from the layout; a level's fan-out lies in later levels, already
                    // final, and its pins are distinct.
                    unsafe { launch.launch(grid(level.0.n_level_pins)) }
                        .during("launching backward_level")
                        .map(drop)
                })?;
            }
        }
        Ok(())
    }

    /// Copies the results of [`DeviceTiming::run_forward`] back (waits for them), and
    /// the RC pass's values into `wire` when given (each array as long as the layout's
    /// count). The parasitics results are final before the forward levels start, and
    /// the arrivals, slews and delays before the tests are evaluated, so they come back
    /// on the copy stream while the context's stream still computes; the test results
    /// come last.
    pub fn download_forward(
        &self,
        wire: Option<WireOutputs<'_>>,
    ) -> Result<ForwardResults, GpuError> {
        const DURING: &str = "copying from the GPU";
        let copy_stream = self.context.copy_stream();
        if let Some(wire) = wire {
            let copy = |from: &CudaSlice<f64>, to: &mut [f64]| {
                check_length("download", from.len().max(1), to.len().max(1))
                    .map_err(GpuError::Layout)?;
                self.context.copy_to_host_on(copy_stream, from, to)
            };
            copy_stream.wait(&self.parasitics_done).during(DURING)?;
            copy(&self.net_load, wire.net_load.as_flattened_mut())?;
            copy(&self.wire_delay, wire.wire_delay.as_flattened_mut())?;
            copy(&self.wire_impulse, wire.wire_impulse.as_flattened_mut())?;
        }
        let (n_pins, n_arcs) = (self.n_pins as usize, self.n_arcs as usize);
        copy_stream.wait(&self.levels_done).during(DURING)?;
        let arrival = self
            .context
            .download_vec(copy_stream, &self.arrival, n_pins)?;
        let slew = self.context.download_vec(copy_stream, &self.slew, n_pins)?;
        let arc_delay = self
            .context
            .download_vec(copy_stream, &self.arc_delay, n_arcs)?;
        let test_required = if self.tests_evaluated {
            let n_tests = self.n_tests as usize;
            let stream = self.context.stream();
            Some(
                self.context
                    .download_vec(stream, &self.test_required, n_tests)?,
            )
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

    /// The backward levels from `seeds` (`(pin, required)`, each pin once; every other
    /// pin starts with no value), after [`DeviceTiming::run_forward`].
    pub fn run_backward(&mut self, seeds: &[(u32, [f64; 4])]) -> Result<(), GpuError> {
        fill_nan(&self.context, &mut self.seed)?;
        let pins: Vec<u32> = seeds.iter().map(|entry| entry.0).collect();
        let values: Vec<[f64; 4]> = seeds.iter().map(|entry| entry.1).collect();
        scatter(&self.context, self.n_pins, &pins, &values, &mut self.seed)?;
        self.sweep(Order::Backward)
    }

    /// Copies the required times back (waits for the backward levels).
    pub fn download_required(&self) -> Result<Vec<[f64; 4]>, GpuError> {
        let stream = self.context.stream();
        self.context
            .download_vec(stream, &self.required, self.n_pins as usize)
    }

    /// Waits for everything queued.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.context.synchronize()
    }
}

/// An event for ordering work across the context's streams (no timing).
fn new_event(context: &GpuContext) -> Result<CudaEvent, GpuError> {
    let flags = Some(CUevent_flags::CU_EVENT_DISABLE_TIMING);
    context
        .cuda_context()
        .new_event(flags)
        .during("creating an event")
}

/// A [`LevelLaunch`] as a kernel parameter.
#[repr(transparent)]
#[derive(Debug, Clone, Copy)]
struct LevelArgs(LevelLaunch);

// SAFETY: `LevelLaunch` is a `repr(C)` struct of plain integers with no padding, and
// the entry points take that same definition (from `tachyon-kernels`) as their first
// parameter, so the bytes copied into the launch are the bytes the kernel reads.
unsafe impl DeviceRepr for LevelArgs {}

/// The device address of `buffer`.
fn device_address<T>(buffer: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    // With event tracking off (see `GpuContext::open`) the returned guard records
    // nothing; ordering comes from the context's single stream.
    buffer.device_ptr(stream).0
}

/// Which way a sweep visits the levels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Order {
    #[default]
    Forward,
    Backward,
}

/// A sweep's levels: `starts` (one more than the levels) into the pins at
/// `base.level_pins`, and the launch parameters all its levels share.
#[derive(Debug, Default)]
struct Levels {
    starts: Vec<u32>,
    order: Order,
    base: LevelLaunch,
}

impl Levels {
    /// Calls `launch` with the parameters of every non-empty level, in the sweep's order.
    fn for_each(
        &self,
        mut launch: impl FnMut(LevelArgs) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let n_levels = self.starts.len().saturating_sub(1);
        let mut visit = |level: usize| {
            let (first, last) = (self.starts[level], self.starts[level + 1]);
            if first == last {
                return Ok(());
            }
            launch(LevelArgs(LevelLaunch {
                level_pins: self.base.level_pins + u64::from(first) * 4,
                n_level_pins: last - first,
                ..self.base
            }))
        };
        match self.order {
            Order::Forward => (0..n_levels).try_for_each(&mut visit),
            Order::Backward => (0..n_levels).rev().try_for_each(&mut visit),
        }
    }
}

/// Sets every value of `buffer` to the canonical NaN ("no value").
fn fill_nan(context: &GpuContext, buffer: &mut CudaSlice<f64>) -> Result<(), GpuError> {
    let kernels = context.kernels()?;
    let n = buffer.len() as u64;
    let mut launch = context.stream().launch_builder(&kernels.fill_f64);
    launch.arg(&n).arg(&f64::NAN).arg(buffer);
    // SAFETY: matches `ptx_entry::fill_f64`; `buffer` holds `n` values, and the grid
    // (one thread per value) is far below the 2^31 blocks a launch allows for any
    // buffer that fits a GPU.
    unsafe { launch.launch(grid(n.min(u32::MAX as u64) as u32)) }.during("launching fill_f64")?;
    Ok(())
}

/// Writes `values[i]` to pin `pins[i]` of `target`, a buffer of `n_pins` quadruples.
fn scatter(
    context: &GpuContext,
    n_pins: u32,
    pins: &[u32],
    values: &[[f64; 4]],
    target: &mut CudaSlice<f64>,
) -> Result<(), GpuError> {
    const DURING: &str = "uploading per-pin values";
    if pins.is_empty() {
        return Ok(());
    }
    check_length("scattered values", pins.len(), values.len()).map_err(GpuError::Layout)?;
    check_indices("scattered pins", pins, n_pins as usize).map_err(GpuError::Layout)?;
    let index = context.upload(DURING, pins)?;
    let data = context.upload(DURING, values.as_flattened())?;
    let kernels = context.kernels()?;
    let n = pins.len() as u32;
    let mut launch = context.stream().launch_builder(&kernels.scatter_quads);
    launch
        .arg(&n)
        .arg(&index)
        .arg(&data)
        .arg(&n_pins)
        .arg(target);
    // SAFETY: matches `ptx_entry::scatter_quads`; `index` and `data` hold `n` entries,
    // every index was checked against `n_pins` (the target's quadruples), and the
    // callers pass each pin once, so each element has one writer.
    unsafe { launch.launch(grid(n)) }.during("launching scatter_quads")?;
    Ok(())
}

/// Runs `check` on every item of `words` (`width` words each) in parallel and returns
/// the error of the first failing one in order (so a bad layout gives the same error
/// whatever the thread count). Chunk by chunk, as in `check_indices_or_none` (item by
/// item: 31 ms for the 5.9M arcs of 1M gates on 2 cores).
pub(crate) fn check_each(
    words: &[u32],
    width: usize,
    check: impl Fn(&[u32]) -> Result<(), BatchError> + Sync,
) -> Result<(), BatchError> {
    let first_bad_chunk = words
        .par_chunks(CHECK_CHUNK * width)
        .find_first(|chunk| chunk.chunks_exact(width).any(|item| check(item).is_err()));
    match first_bad_chunk {
        Some(chunk) => chunk.chunks_exact(width).try_for_each(check),
        None => Ok(()),
    }
}
