//! CPPR grouping passes on the GPU (the scheme: `tachyon-cppr`). One split's compiled
//! data network is uploaded once; every pass then only changes the groups of the start
//! points, replays the per-level launches (captured once into a CUDA graph) and brings
//! back the entries the tests read. With several GPUs the passes are shared among them,
//! each GPU holding its own copy of the network. The per-entry step is
//! `tachyon_kernels::cppr::entry_groups`, the function the CPU passes run.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;
use tachyon_kernels::cppr::{
    EntryGroups, GroupInput, ShapeInput, INPUT_CELL, INPUT_LAUNCH, INPUT_NET, INPUT_NET_CELL,
    INPUT_SEED,
};
use tachyon_kernels::Split;

use crate::batch::{check_length, BatchError};
use crate::context::{CapturedGraph, GpuContext};
use crate::error::{DuringExt, GpuError};
use crate::timing::{check_indices, check_starts, grid, CpprValues};

/// One split's compiled data network (layout: `tachyon_kernels::cppr`).
#[derive(Debug, Clone, Copy)]
pub struct GroupNetworkLayout<'a> {
    /// Late (keep the latest arrivals) or early.
    pub late: bool,
    /// Entries `level_start[l]..level_start[l + 1]` form level `l`; entries before
    /// `level_start[0]` are never written (they read as empty).
    pub level_start: &'a [u32],
    /// `input_start[e]..input_start[e + 1]` index the inputs of entry `e`.
    pub input_start: &'a [u32],
    pub inputs: &'a [GroupInput],
    /// The start points (launches and the primary inputs' slot): the length of each
    /// pass's groups.
    pub n_starts: u32,
    /// The entries each pass brings back, in this order.
    pub wanted: &'a [u32],
}

impl GroupNetworkLayout<'_> {
    fn n_entries(&self) -> usize {
        self.input_start.len().saturating_sub(1)
    }

    /// Checks every index, and that each entry reads only entries of earlier levels
    /// (so the entries of a level can be computed at the same time).
    pub fn validate(&self) -> Result<(), BatchError> {
        validate_network(
            self.level_start,
            self.input_start,
            self.inputs.len(),
            self.n_starts,
            |position| (self.inputs[position].kind, self.inputs[position].source),
        )?;
        check_indices("wanted entries", self.wanted, self.n_entries())
    }

    /// Device bytes the network and one pass take.
    pub fn device_bytes(&self) -> u64 {
        let entry_bytes = std::mem::size_of::<EntryGroups>() as u64;
        (self.input_start.len() as u64 + self.n_starts as u64 + self.wanted.len() as u64) * 4
            + std::mem::size_of_val(self.inputs) as u64
            + (self.n_entries() as u64 + self.wanted.len() as u64) * entry_bytes
    }
}

/// Checks a network's (or shape's) starts, and each input's source (given by
/// `kind_source` per input position): entries of earlier levels for net and cell
/// inputs, start points below `n_starts` for launches and seeds.
fn validate_network(
    level_start: &[u32],
    input_start: &[u32],
    n_inputs: usize,
    n_starts: u32,
    kind_source: impl Fn(usize) -> (u32, u32) + Sync,
) -> Result<(), BatchError> {
    let n_entries = input_start.len().saturating_sub(1);
    if n_entries >= u32::MAX as usize || n_inputs >= u32::MAX as usize {
        return Err(BatchError::TooLarge {
            what: "CPPR network entries or inputs",
            count: n_entries.max(n_inputs),
            limit: u32::MAX as usize - 1,
        });
    }
    check_starts("input_start", input_start, n_inputs)?;
    let ascending = level_start.windows(2).all(|pair| pair[0] <= pair[1]);
    if !ascending || level_start.last() != Some(&(n_entries as u32)) {
        return Err(BatchError::BadStarts {
            array: "level_start",
            end: n_entries,
        });
    }
    // Level by level, and within a level in chunks of inputs, in parallel.
    level_start.par_windows(2).try_for_each(|level| {
        let (begin, end) = (level[0] as usize, level[1] as usize);
        let (first, last) = (input_start[begin] as usize, input_start[end] as usize);
        (first..last)
            .into_par_iter()
            .with_min_len(4096)
            .try_for_each(|position| {
                let (kind, source) = kind_source(position);
                let limit = match kind {
                    INPUT_NET | INPUT_CELL | INPUT_NET_CELL => begin,
                    INPUT_LAUNCH | INPUT_SEED => n_starts as usize,
                    _ => 0,
                };
                if (source as usize) < limit {
                    return Ok(());
                }
                Err(BatchError::IndexOutOfRange {
                    array: "CPPR input sources",
                    position,
                    value: source,
                    limit,
                })
            })
    })
}

/// `values` as the 64-bit words the GPU copies (both element types are `repr(C)` with
/// 8-byte alignment and no padding).
fn as_words<T: Copy>(values: &[T]) -> &[u64] {
    debug_assert!(std::mem::size_of::<T>() % 8 == 0 && std::mem::align_of::<T>() == 8);
    // SAFETY: `T` (`GroupInput`, `EntryGroups`) is 8-aligned, a multiple of 8 bytes
    // long and has no padding, so its bytes are initialised 64-bit words.
    unsafe {
        std::slice::from_raw_parts(
            values.as_ptr().cast::<u64>(),
            std::mem::size_of_val(values) / 8,
        )
    }
}

/// `values` as writable 64-bit words.
fn as_words_mut(values: &mut [EntryGroups]) -> &mut [u64] {
    // SAFETY: as in `as_words`; any bits are a valid `f64` or `u32`, so writing words
    // cannot make an invalid `EntryGroups`.
    unsafe {
        std::slice::from_raw_parts_mut(
            values.as_mut_ptr().cast::<u64>(),
            std::mem::size_of_val(values) / 8,
        )
    }
}

const UPLOADING: &str = "uploading the CPPR network";

/// A network on one GPU, with the buffers of a pass.
struct DeviceGroupNetwork {
    context: Arc<GpuContext>,
    late: u32,
    n_entries: u32,
    n_inputs: u32,
    n_starts: u32,
    n_wanted: u32,
    level_start: Vec<u32>,
    input_start: CudaSlice<u32>,
    inputs: CudaSlice<u64>,
    wanted: CudaSlice<u32>,
    start_group: CudaSlice<u32>,
    arrivals: CudaSlice<u64>,
    out: CudaSlice<u64>,
    /// The level launches, captured on the first pass.
    levels: Option<CapturedGraph>,
}

impl DeviceGroupNetwork {
    fn upload(
        context: &Arc<GpuContext>,
        layout: &GroupNetworkLayout<'_>,
    ) -> Result<DeviceGroupNetwork, GpuError> {
        context.ensure_free(UPLOADING, layout.device_bytes())?;
        let input_start = context.upload(UPLOADING, layout.input_start)?;
        let inputs = context.upload(UPLOADING, as_words(layout.inputs))?;
        DeviceGroupNetwork::on_device(
            context,
            layout.late,
            layout.level_start,
            (input_start, layout.n_entries()),
            (inputs, layout.inputs.len()),
            layout.n_starts,
            layout.wanted,
        )
    }

    /// A network whose `input_start` (for `n_entries` entries) and `inputs` (`n_inputs`
    /// of them, as words) are on the device already, with the buffers of a pass.
    fn on_device(
        context: &Arc<GpuContext>,
        late: bool,
        level_start: &[u32],
        (input_start, n_entries): (CudaSlice<u32>, usize),
        (inputs, n_inputs): (CudaSlice<u64>, usize),
        n_starts: u32,
        wanted: &[u32],
    ) -> Result<DeviceGroupNetwork, GpuError> {
        let words_per_entry = std::mem::size_of::<EntryGroups>() / 8;
        // Entries before the first level are never written: they must read as empty,
        // which all-ones bytes are (NaN values, `NO_GROUP` groups).
        let arrivals = context.allocate_poisoned(UPLOADING, n_entries * words_per_entry)?;
        Ok(DeviceGroupNetwork {
            context: Arc::clone(context),
            late: u32::from(late),
            n_entries: n_entries as u32,
            n_inputs: n_inputs as u32,
            n_starts,
            n_wanted: wanted.len() as u32,
            level_start: level_start.to_vec(),
            input_start,
            inputs,
            wanted: context.upload(UPLOADING, wanted)?,
            start_group: context.allocate_poisoned(UPLOADING, n_starts as usize)?,
            arrivals,
            out: context.allocate_poisoned(UPLOADING, wanted.len() * words_per_entry)?,
            levels: None,
        })
    }

    /// Queues one launch per non-empty level.
    fn launch_levels(&mut self) -> Result<(), GpuError> {
        let kernels = self.context.kernels()?;
        let stream = self.context.stream();
        for level in 0..self.level_start.len().saturating_sub(1) {
            let (first, last) = (self.level_start[level], self.level_start[level + 1]);
            if first == last {
                continue;
            }
            let n_level = last - first;
            let mut launch = stream.launch_builder(&kernels.cppr_level);
            launch
                .arg(&first)
                .arg(&n_level)
                .arg(&self.late)
                .arg(&self.n_entries)
                .arg(&self.input_start)
                .arg(&self.n_inputs)
                .arg(&self.inputs)
                .arg(&self.n_starts)
                .arg(&self.start_group)
                .arg(&mut self.arrivals);
            // SAFETY: matches `ptx_entry::cppr_level`; `GroupNetworkLayout::validate`
            // checked the starts, every input's source (entries of earlier levels,
            // start points below `n_starts`), and the buffers were sized from those
            // counts; each entry of the level has one writer.
            unsafe { launch.launch(grid(n_level)) }.during("launching cppr_level")?;
        }
        Ok(())
    }

    /// The level launches as a CUDA graph, captured on first use: a pass changes only
    /// the contents of `start_group`, so one graph replays every pass.
    fn replay_levels(&mut self) -> Result<(), GpuError> {
        if self.levels.is_none() {
            let context = Arc::clone(&self.context);
            self.levels = context.capture(|| self.launch_levels())?;
        }
        match &self.levels {
            Some(graph) => graph.launch(),
            // Nothing was captured: there is no level to run.
            None => Ok(()),
        }
    }

    /// Runs one pass seeded by `start_group` and returns the wanted entries.
    fn pass(&mut self, start_group: &[u32]) -> Result<Vec<EntryGroups>, GpuError> {
        check_length("start_group", self.n_starts as usize, start_group.len())
            .map_err(GpuError::Layout)?;
        self.context
            .copy_to_device(start_group, &mut self.start_group)?;
        self.replay_levels()?;
        let kernels = self.context.kernels()?;
        let mut launch = self.context.stream().launch_builder(&kernels.cppr_gather);
        launch
            .arg(&self.n_wanted)
            .arg(&self.wanted)
            .arg(&self.n_entries)
            .arg(&self.arrivals)
            .arg(&mut self.out);
        // SAFETY: matches `ptx_entry::cppr_gather`; the wanted entries were checked
        // against `n_entries` and `out` holds `n_wanted` entries.
        unsafe { launch.launch(grid(self.n_wanted)) }.during("launching cppr_gather")?;
        let mut result = vec![tachyon_kernels::cppr::EMPTY_ENTRY; self.n_wanted as usize];
        self.context
            .copy_to_host(&self.out, as_words_mut(&mut result))?;
        Ok(result)
    }
}

/// A pass's index and the entries it brought back.
type PassResult = (usize, Vec<EntryGroups>);

/// Runs one pass per element of `passes` (each the groups of the `layout.n_starts`
/// start points) and returns, per pass, the entries `layout.wanted`. The passes are
/// shared among `contexts` (one thread per GPU, each with its own copy of the
/// network); results come back in the order of `passes` and do not depend on how many
/// GPUs ran them.
pub fn run_group_passes(
    contexts: &[Arc<GpuContext>],
    layout: &GroupNetworkLayout<'_>,
    passes: &[Vec<u32>],
) -> Result<Vec<Vec<EntryGroups>>, GpuError> {
    let started = std::time::Instant::now();
    layout.validate().map_err(GpuError::Layout)?;
    let validated = started.elapsed();
    let n_gpus = contexts.len().min(passes.len()).max(1);
    let Some(first) = contexts.first() else {
        return Err(GpuError::NoDevice);
    };
    let run_share = |context: &Arc<GpuContext>, share: usize| {
        let started = std::time::Instant::now();
        let mut network = DeviceGroupNetwork::upload(context, layout)?;
        let uploaded = started.elapsed();
        let results = (share..passes.len())
            .step_by(n_gpus)
            .map(|pass| Ok((pass, network.pass(&passes[pass])?)))
            .collect::<Result<Vec<_>, GpuError>>();
        tracing::debug!(
            gpu = context.ordinal(),
            validate_ms = validated.as_secs_f64() * 1e3,
            upload_ms = uploaded.as_secs_f64() * 1e3,
            passes_ms = (started.elapsed() - uploaded).as_secs_f64() * 1e3,
            "cppr passes on the GPU"
        );
        results
    };
    let shares: Vec<Result<Vec<PassResult>, GpuError>> = if n_gpus == 1 {
        vec![run_share(first, 0)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = contexts[..n_gpus]
                .iter()
                .enumerate()
                .map(|(share, context)| scope.spawn(move || run_share(context, share)))
                .collect();
            handles
                .into_iter()
                .map(|handle| match handle.join() {
                    Ok(result) => result,
                    Err(panic) => std::panic::resume_unwind(panic),
                })
                .collect()
        })
    };
    let mut results: Vec<Vec<EntryGroups>> = vec![Vec::new(); passes.len()];
    for share in shares {
        for (pass, values) in share? {
            results[pass] = values;
        }
    }
    Ok(results)
}

/// The shape of a CPPR data network (layout: `tachyon_kernels::cppr`), the same for
/// both splits: with a split's values filled in ([`tachyon_kernels::cppr::fill_input`])
/// it is that split's network.
#[derive(Debug, Clone, Copy)]
pub struct GroupShapeLayout<'a> {
    /// Entries `level_start[l]..level_start[l + 1]` form level `l`.
    pub level_start: &'a [u32],
    /// `input_start[e]..input_start[e + 1]` index the inputs of entry `e`.
    pub input_start: &'a [u32],
    pub inputs: &'a [ShapeInput],
    /// The start points' clock nodes (`pin * 2 + transition`); start point
    /// `launch_nodes.len()` is the primary inputs'.
    pub launch_nodes: &'a [u32],
}

impl GroupShapeLayout<'_> {
    fn n_starts(&self) -> u32 {
        self.launch_nodes.len() as u32 + 1
    }
}

/// A network's shape on the GPU that holds the timing data ([`CpprValues`]),
/// validated once: each split's network is filled in there from the arc delays and
/// arrivals the forward phase left on the device, so no network crosses the bus.
pub struct DeviceGroupShape {
    context: Arc<GpuContext>,
    n_entries: usize,
    n_inputs: usize,
    n_starts: u32,
    level_start: Vec<u32>,
    input_start: CudaSlice<u32>,
    inputs: CudaSlice<u32>,
    launch_nodes: CudaSlice<u32>,
}

impl std::fmt::Debug for DeviceGroupShape {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("DeviceGroupShape")
            .field("n_entries", &self.n_entries)
            .field("n_inputs", &self.n_inputs)
            .finish_non_exhaustive()
    }
}

impl DeviceGroupShape {
    /// Validates `layout` (as [`GroupNetworkLayout::validate`] does: the fill keeps
    /// every input's kind and source) and copies it to the GPU that holds `timing`.
    pub fn upload(
        timing: CpprValues<'_>,
        layout: &GroupShapeLayout<'_>,
    ) -> Result<DeviceGroupShape, GpuError> {
        let n_starts = layout.n_starts();
        validate_network(
            layout.level_start,
            layout.input_start,
            layout.inputs.len(),
            n_starts,
            |position| (layout.inputs[position].kind, layout.inputs[position].source),
        )
        .map_err(GpuError::Layout)?;
        let context = timing.context;
        let bytes = std::mem::size_of_val(layout.input_start)
            + std::mem::size_of_val(layout.inputs)
            + std::mem::size_of_val(layout.launch_nodes);
        context.ensure_free(UPLOADING, bytes as u64)?;
        Ok(DeviceGroupShape {
            context: Arc::clone(context),
            n_entries: layout.input_start.len().saturating_sub(1),
            n_inputs: layout.inputs.len(),
            n_starts,
            level_start: layout.level_start.to_vec(),
            input_start: context.upload(UPLOADING, layout.input_start)?,
            inputs: context.upload(UPLOADING, shape_words(layout.inputs))?,
            launch_nodes: context.upload(UPLOADING, layout.launch_nodes)?,
        })
    }
}

/// `inputs` as the 32-bit words the GPU copies.
fn shape_words(inputs: &[ShapeInput]) -> &[u32] {
    // SAFETY: `ShapeInput` is `repr(C)`, five `u32`s with no padding, so its bytes are
    // initialised 32-bit words, 4-aligned.
    unsafe {
        std::slice::from_raw_parts(
            inputs.as_ptr().cast::<u32>(),
            std::mem::size_of_val(inputs) / 4,
        )
    }
}

/// [`run_group_passes`] on the GPU that holds `timing`, the network of `split` filled in there
/// from `shape` (uploaded to the same GPU) by `cppr_fill`: one pass per element of
/// `passes`, each bringing back the entries `wanted`.
pub fn run_resident_group_passes(
    timing: CpprValues<'_>,
    shape: &DeviceGroupShape,
    split: Split,
    wanted: &[u32],
    passes: &[Vec<u32>],
) -> Result<Vec<Vec<EntryGroups>>, GpuError> {
    const DURING: &str = "filling the CPPR network";
    check_indices("wanted entries", wanted, shape.n_entries).map_err(GpuError::Layout)?;
    let values = timing;
    if !Arc::ptr_eq(values.context, &shape.context) {
        return Err(GpuError::ShapeOnAnotherGpu);
    }
    let context = &shape.context;
    let words_per_input = std::mem::size_of::<GroupInput>() / 8;
    context.ensure_free(
        DURING,
        (shape.n_inputs * words_per_input * 8
            + shape.n_entries * std::mem::size_of::<EntryGroups>()) as u64,
    )?;
    let mut inputs: CudaSlice<u64> =
        context.allocate_poisoned(DURING, shape.n_inputs * words_per_input)?;
    let kernels = context.kernels()?;
    let split_index = split.index() as u32;
    let n_inputs = shape.n_inputs as u32;
    let n_launches = shape.n_starts - 1;
    let mut launch = context.stream().launch_builder(&kernels.cppr_fill);
    launch
        .arg(&split_index)
        .arg(&n_inputs)
        .arg(&shape.inputs)
        .arg(&values.n_arcs)
        .arg(values.arc_delay)
        .arg(&values.n_pins)
        .arg(values.arrival)
        .arg(values.slew)
        .arg(&n_launches)
        .arg(&shape.launch_nodes)
        .arg(&mut inputs);
    // SAFETY: matches `ptx_entry::cppr_fill`: `shape.inputs` holds `n_inputs` shape
    // inputs and `inputs` room for as many network inputs; the timing buffers hold
    // `n_arcs` and `n_pins` values of four conditions; `launch_nodes` holds the start
    // points but the primary inputs' slot.
    unsafe { launch.launch(grid(n_inputs)) }.during("launching cppr_fill")?;
    let input_start = context
        .stream()
        .clone_dtod(&shape.input_start)
        .during(DURING)?;
    let mut network = DeviceGroupNetwork::on_device(
        context,
        split == Split::Late,
        &shape.level_start,
        (input_start, shape.n_entries),
        (inputs, shape.n_inputs),
        shape.n_starts,
        wanted,
    )?;
    passes.iter().map(|groups| network.pass(groups)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(kind: u32, source: u32) -> GroupInput {
        GroupInput {
            kind,
            source,
            delays: [1.0, 2.0, f64::NAN, f64::NAN, f64::NAN, f64::NAN],
        }
    }

    /// Entry 0 empty; level 0: entries 1 (a primary input) and 2 (a launch); level 1:
    /// entry 3 reading entries 1 and 2.
    fn small_network(inputs: &[GroupInput]) -> GroupNetworkLayout<'_> {
        GroupNetworkLayout {
            late: true,
            level_start: &[1, 3, 4],
            input_start: &[0, 0, 1, 2, 4],
            inputs,
            n_starts: 2,
            wanted: &[3, 0],
        }
    }

    #[test]
    fn a_well_formed_network_validates() {
        let inputs = [
            input(INPUT_SEED, 1),
            input(INPUT_LAUNCH, 0),
            input(INPUT_NET, 1),
            input(INPUT_CELL, 2),
        ];
        assert_eq!(small_network(&inputs).validate(), Ok(()));
    }

    #[test]
    fn an_input_from_its_own_level_is_refused() {
        // Entry 3 reading entry 3 would race with its own computation.
        let inputs = [
            input(INPUT_SEED, 1),
            input(INPUT_LAUNCH, 0),
            input(INPUT_NET, 1),
            input(INPUT_CELL, 3),
        ];
        let error = small_network(&inputs).validate().unwrap_err();
        assert!(
            error.to_string().contains("CPPR input sources[3] is 3"),
            "{error}"
        );
    }

    #[test]
    fn bad_start_points_levels_and_wanted_entries_are_refused() {
        let inputs = [
            input(INPUT_SEED, 2),
            input(INPUT_LAUNCH, 0),
            input(INPUT_NET, 1),
            input(INPUT_CELL, 2),
        ];
        assert!(small_network(&inputs).validate().is_err());
        let inputs = [
            input(INPUT_SEED, 1),
            input(INPUT_LAUNCH, 0),
            input(INPUT_NET, 1),
            input(INPUT_CELL, 2),
        ];
        let mut layout = small_network(&inputs);
        layout.level_start = &[1, 3];
        assert!(layout.validate().is_err());
        let mut layout = small_network(&inputs);
        layout.wanted = &[4];
        assert!(layout.validate().is_err());
    }

    #[test]
    fn entry_groups_travel_as_words() {
        let mut groups = [tachyon_kernels::cppr::EMPTY_ENTRY; 2];
        groups[1][0].insert(true, 3.5, 7);
        let words = as_words(&groups).to_vec();
        assert_eq!(words.len(), 12);
        let mut back = [tachyon_kernels::cppr::EMPTY_ENTRY; 2];
        as_words_mut(&mut back).copy_from_slice(&words);
        assert_eq!(back[1][0].values[0], 3.5);
        assert_eq!(back[1][0].groups, [7, tachyon_kernels::cppr::NO_GROUP]);
    }
}
