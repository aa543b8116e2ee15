//! The RC pass on the GPU: a batch of nets ([`RcNetBatch`]) uploaded with room for the
//! results, and the `rc_nets` kernel's launch shape.

use std::sync::Arc;

use tachyon_gpu::abi::{FlattenRcNetworksArgs, LayOutRcNetworksArgs, RcNetsArgs};
use tachyon_gpu::check::{check_length, check_starts};
use tachyon_gpu::{DeviceBuffer, GpuContext, GpuError, LaunchShape, LayoutError};
use tachyon_graph::RcNetworks;
use tachyon_kernels::N_CONDITIONS;

use super::layout::{RcNetBatch, RcNetsOutput};

/// How the `rc_nets` kernel is spread over a GPU.
///
/// The kernel sweeps each net several times and reads back what it just wrote. From
/// global memory every such step is a trip to L2, so nets of up to `shared_nodes_per_net`
/// nodes are computed in shared memory (one slot of `3 * 4 * shared_nodes_per_net`
/// values per four threads) and copied out once; larger nets run in global memory. The
/// grid holds `blocks_per_multiprocessor` blocks per multiprocessor and each thread loops
/// over the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RcLaunch {
    /// Threads per block: a multiple of 32, at most 1024.
    pub threads_per_block: u32,
    pub blocks_per_multiprocessor: u32,
    /// The largest net computed in shared memory; 0 computes every net in global memory.
    /// Lowered automatically when the block's slots would not fit the GPU's shared memory.
    pub shared_nodes_per_net: u32,
}

/// The default shape, measured on an H100 (docs/PERFORMANCE.md): global memory only,
/// four blocks of 256 threads per multiprocessor. On nets of 2 to 10 nodes (a generated
/// design's average about 6) one block per multiprocessor left 8 warps of 64 active and
/// took twice as long.
impl Default for RcLaunch {
    fn default() -> Self {
        RcLaunch {
            threads_per_block: 256,
            blocks_per_multiprocessor: 4,
            shared_nodes_per_net: 0,
        }
    }
}

impl RcLaunch {
    /// Bytes of dynamic shared memory a block needs.
    pub fn shared_bytes_per_block(&self) -> u64 {
        let slots = (self.threads_per_block / N_CONDITIONS as u32) as u64;
        slots * 3 * N_CONDITIONS as u64 * self.shared_nodes_per_net as u64 * 8
    }
}

/// A batch of RC nets on a GPU, with room for the results.
pub struct DeviceRcNets {
    gpu: Arc<GpuContext>,
    n_nets: u32,
    n_nodes: u32,
    net_offsets: DeviceBuffer<u32>,
    parent: DeviceBuffer<u32>,
    res: DeviceBuffer<f64>,
    cap: DeviceBuffer<f64>,
    pub(crate) load: DeviceBuffer<f64>,
    pub(crate) delay: DeviceBuffer<f64>,
    pub(crate) impulse: DeviceBuffer<f64>,
}

impl std::fmt::Debug for DeviceRcNets {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("DeviceRcNets")
            .field("n_nets", &self.n_nets)
            .field("n_nodes", &self.n_nodes)
            .finish()
    }
}

impl DeviceRcNets {
    /// Uploads `batch` to `gpu` and allocates its results.
    pub fn upload(gpu: &Arc<GpuContext>, batch: &RcNetBatch) -> Result<DeviceRcNets, GpuError> {
        const DURING: &str = "uploading RC nets";
        gpu.ensure_free(DURING, batch.device_bytes())?;
        let n_values = batch.n_nodes() as usize * N_CONDITIONS;
        Ok(DeviceRcNets {
            gpu: Arc::clone(gpu),
            n_nets: batch.n_nets(),
            n_nodes: batch.n_nodes(),
            net_offsets: gpu.upload(DURING, batch.net_offsets())?,
            parent: gpu.upload(DURING, batch.parent())?,
            res: gpu.upload(DURING, batch.res())?,
            cap: gpu.upload(DURING, batch.cap())?,
            load: gpu.allocate(DURING, n_values)?,
            delay: gpu.allocate(DURING, n_values)?,
            impulse: gpu.allocate(DURING, n_values)?,
        })
    }

    pub fn n_nets(&self) -> u32 {
        self.n_nets
    }

    pub fn n_nodes(&self) -> u32 {
        self.n_nodes
    }

    /// Queues the `rc_nets` kernel with `shape` (returns before it finishes).
    pub fn launch(&self, shape: RcLaunch) -> Result<(), GpuError> {
        if self.n_nets == 0 || self.n_nodes == 0 {
            return Ok(());
        }
        let n_items = self.n_nets as usize * N_CONDITIONS;
        let mut shape = shape;
        shape.threads_per_block = (shape.threads_per_block / 32).clamp(1, 32) * 32;
        while shape.shared_bytes_per_block() > self.gpu.max_shared_bytes_per_block() as u64 {
            shape.shared_nodes_per_net /= 2;
        }
        let blocks = (self.gpu.multiprocessor_count() * shape.blocks_per_multiprocessor.max(1))
            .min(n_items.div_ceil(shape.threads_per_block as usize) as u32)
            .max(1);
        self.gpu.launch(
            LaunchShape {
                blocks,
                threads_per_block: shape.threads_per_block,
                shared_bytes: shape.shared_bytes_per_block() as u32,
            },
            RcNetsArgs {
                net_offsets: self.net_offsets.view(),
                parent: self.parent.view(),
                res: self.res.view(),
                cap: self.cap.view(),
                load: self.load.cells(),
                delay: self.delay.cells(),
                impulse: self.impulse.cells(),
                shared_nodes_per_net: shape.shared_nodes_per_net,
            },
        )
    }

    /// Copies the results of the last launch back (waits for it).
    pub fn download(&self) -> Result<RcNetsOutput, GpuError> {
        let n_values = self.n_nodes as usize * N_CONDITIONS;
        Ok(RcNetsOutput {
            load: self.gpu.download(&self.load, 0..n_values)?,
            delay: self.gpu.download(&self.delay, 0..n_values)?,
            impulse: self.gpu.download(&self.impulse, 0..n_values)?,
        })
    }

    /// Runs the kernel `runs` times with `shape` and returns each run's time in
    /// milliseconds, measured with device events around the launch.
    pub fn time(&self, shape: RcLaunch, runs: usize) -> Result<Vec<f64>, GpuError> {
        (0..runs)
            .map(|_| self.gpu.time(|| self.launch(shape)))
            .collect()
    }
}

/// Runs the RC passes of `batch` on `gpu`: upload, launch, download.
pub fn rc_nets(gpu: &Arc<GpuContext>, batch: &RcNetBatch) -> Result<RcNetsOutput, GpuError> {
    let nets = DeviceRcNets::upload(gpu, batch)?;
    nets.launch(RcLaunch::default())?;
    nets.download()
}

/// A validated batch of resistor networks as a SPEF file gives them (nodes, resistors
/// in file order, the driver's node), to be flattened into BFS trees
/// (`tachyon_kernels::rc_flatten`). Node indices are local to their net.
#[derive(Debug, Clone, Default)]
pub struct RcNetworkBatch {
    node_offsets: Vec<u32>,
    resistor_offsets: Vec<u32>,
    ground: Vec<f64>,
    ends: Vec<[u32; 2]>,
    ohms: Vec<f64>,
    roots: Vec<u32>,
}

impl RcNetworkBatch {
    /// Checks and takes a batch: `node_offsets` and `resistor_offsets` (`n_nets + 1`
    /// ascending values from 0 to the node and resistor counts), per node its ground
    /// capacitance, per resistor its two ends (each below its net's node count) and
    /// resistance, per net its root (a root that is not a node places nothing).
    pub fn new(
        node_offsets: Vec<u32>,
        resistor_offsets: Vec<u32>,
        ground: Vec<f64>,
        ends: Vec<[u32; 2]>,
        ohms: Vec<f64>,
        roots: Vec<u32>,
    ) -> Result<Self, LayoutError> {
        let n_nets = node_offsets.len().saturating_sub(1);
        check_length("resistor_offsets", n_nets + 1, resistor_offsets.len())?;
        check_length("roots", n_nets, roots.len())?;
        check_starts("node_offsets", &node_offsets, ground.len())?;
        check_starts("resistor_offsets", &resistor_offsets, ends.len())?;
        check_length("ohms", ends.len(), ohms.len())?;
        // The adjacency starts take a place more per net than the nodes.
        if ground.len() + n_nets >= u32::MAX as usize || 2 * ends.len() >= u32::MAX as usize {
            return Err(LayoutError::TooLarge {
                what: "RC network nodes and resistors",
                count: ground.len().max(2 * ends.len()),
                limit: u32::MAX as usize - 1 - n_nets,
            });
        }
        // In parallel: a million nets' resistors took one thread 10-20 ms.
        use rayon::prelude::*;
        let bad_end = (0..n_nets)
            .into_par_iter()
            .with_min_len(4096)
            .find_map_first(|net| {
                let n_nodes = node_offsets[net + 1] - node_offsets[net];
                let resistors = resistor_offsets[net] as usize..resistor_offsets[net + 1] as usize;
                ends[resistors.clone()]
                    .iter()
                    .enumerate()
                    .find_map(|(at, pair)| {
                        let &node = pair.iter().find(|&&node| node >= n_nodes)?;
                        Some(LayoutError::IndexOutOfRange {
                            array: "resistor ends (local to their net)",
                            position: resistors.start + at,
                            value: node,
                            limit: n_nodes as usize,
                        })
                    })
            });
        if let Some(error) = bad_end {
            return Err(error);
        }
        Ok(RcNetworkBatch {
            node_offsets,
            resistor_offsets,
            ground,
            ends,
            ohms,
            roots,
        })
    }

    /// Takes the networks that the link matched to a graph's pins
    /// (`tachyon_link::Design::rc_networks`), e.g. a SPEF change file's nets.
    pub fn from_networks(networks: &RcNetworks) -> Result<Self, LayoutError> {
        RcNetworkBatch::new(
            networks.node_offsets.clone(),
            networks.resistor_offsets.clone(),
            networks.ground.clone(),
            networks.ends.clone(),
            networks.ohms.clone(),
            networks.roots.clone(),
        )
    }

    /// Takes `networks` by value (no copy of their nodes and resistors), with their pin
    /// entries checked against a graph of `n_pins` pins.
    pub fn take_networks(
        networks: RcNetworks,
        n_pins: usize,
    ) -> Result<(Self, RcNetworkPins), LayoutError> {
        use rayon::prelude::*;
        let entries = &networks.pin_nodes;
        let (pins, pin_nodes) = rayon::join(
            || entries.par_iter().map(|&(pin, _)| pin.0).collect(),
            || entries.par_iter().map(|&(_, node)| node).collect(),
        );
        let pins = RcNetworkPins {
            pin_offsets: networks.pin_offsets,
            pins,
            pin_nodes,
        };
        let batch = RcNetworkBatch::new(
            networks.node_offsets,
            networks.resistor_offsets,
            networks.ground,
            networks.ends,
            networks.ohms,
            networks.roots,
        )?;
        pins.check(&batch, n_pins)?;
        Ok((batch, pins))
    }

    pub fn n_nets(&self) -> usize {
        self.roots.len()
    }

    pub fn n_nodes(&self) -> usize {
        self.ground.len()
    }

    pub fn node_offsets(&self) -> &[u32] {
        &self.node_offsets
    }

    /// Per node, its ground capacitance.
    pub fn ground(&self) -> &[f64] {
        &self.ground
    }

    /// Per net, its root.
    pub fn roots(&self) -> &[u32] {
        &self.roots
    }

    /// The resistors' ends and resistances, and the nets' resistor offsets.
    pub fn parts(&self) -> (&[[u32; 2]], &[f64], &[u32]) {
        (&self.ends, &self.ohms, &self.resistor_offsets)
    }
}

/// Flattened networks: per node of the batch (each net's first `placed` nodes written,
/// the rest zero), the tree's parent (local), resistance and ground capacitance, and
/// each original node's place ([`tachyon_kernels::rc_flatten::UNPLACED`]: none).
#[derive(Debug, Clone, PartialEq)]
pub struct FlattenedNetworks {
    pub parent: Vec<u32>,
    pub res: Vec<f64>,
    pub ground: Vec<f64>,
    pub new_index: Vec<u32>,
    /// Per net, the nodes placed.
    pub placed: Vec<u32>,
}

/// A batch of networks on a GPU, with room for the trees and the working memory.
pub struct DeviceRcNetworks {
    gpu: Arc<GpuContext>,
    n_nets: usize,
    n_nodes: usize,
    node_offsets: DeviceBuffer<u32>,
    resistor_offsets: DeviceBuffer<u32>,
    ground: DeviceBuffer<f64>,
    ends: DeviceBuffer<[u32; 2]>,
    ohms: DeviceBuffer<f64>,
    roots: DeviceBuffer<u32>,
    adjacency_start: DeviceBuffer<u32>,
    fill: DeviceBuffer<u32>,
    adjacency: DeviceBuffer<u32>,
    adjacency_ohms: DeviceBuffer<f64>,
    new_index: DeviceBuffer<u32>,
    order: DeviceBuffer<u32>,
    parent: DeviceBuffer<u32>,
    res: DeviceBuffer<f64>,
    ground_out: DeviceBuffer<f64>,
    placed: DeviceBuffer<u32>,
}

impl std::fmt::Debug for DeviceRcNetworks {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("DeviceRcNetworks")
            .field("n_nets", &self.n_nets)
            .field("n_nodes", &self.n_nodes)
            .finish()
    }
}

impl DeviceRcNetworks {
    /// Uploads `batch` to `gpu` and allocates the trees and the working memory (zeroed).
    pub fn upload(gpu: &Arc<GpuContext>, batch: &RcNetworkBatch) -> Result<Self, GpuError> {
        const DURING: &str = "uploading RC networks";
        let (n_nets, n_nodes, n_ends) = (batch.n_nets(), batch.n_nodes(), batch.ends.len());
        let words = 3 * (n_nets + 1) + n_nodes * 5 + n_nets + 1 + n_ends * 4 + n_nets;
        let doubles = n_nodes * 3 + n_ends * 3;
        gpu.ensure_free(DURING, words as u64 * 4 + doubles as u64 * 8)?;
        let zeroed = |n: usize| -> Result<DeviceBuffer<u32>, GpuError> {
            let buffer = gpu.allocate::<u32>(DURING, n)?;
            gpu.zero(&buffer, 0..n)?;
            Ok(buffer)
        };
        let zeroed_f64 = |n: usize| -> Result<DeviceBuffer<f64>, GpuError> {
            let buffer = gpu.allocate::<f64>(DURING, n)?;
            gpu.zero(&buffer, 0..n)?;
            Ok(buffer)
        };
        Ok(DeviceRcNetworks {
            gpu: Arc::clone(gpu),
            n_nets,
            n_nodes,
            node_offsets: gpu.upload(DURING, &batch.node_offsets)?,
            resistor_offsets: gpu.upload(DURING, &batch.resistor_offsets)?,
            ground: gpu.upload(DURING, &batch.ground)?,
            ends: gpu.upload(DURING, &batch.ends)?,
            ohms: gpu.upload(DURING, &batch.ohms)?,
            roots: gpu.upload(DURING, &batch.roots)?,
            adjacency_start: zeroed(n_nodes + n_nets)?,
            fill: zeroed(n_nodes)?,
            adjacency: zeroed(2 * n_ends)?,
            adjacency_ohms: zeroed_f64(2 * n_ends)?,
            new_index: zeroed(n_nodes)?,
            order: zeroed(n_nodes)?,
            parent: zeroed(n_nodes)?,
            res: zeroed_f64(n_nodes)?,
            ground_out: zeroed_f64(n_nodes)?,
            placed: zeroed(n_nets)?,
        })
    }

    /// Queues the `flatten_rc_networks` kernel (a thread per net; returns before it
    /// finishes).
    pub fn launch(&self) -> Result<(), GpuError> {
        if self.n_nets == 0 {
            return Ok(());
        }
        self.gpu.launch(
            super::device::per_item(self.n_nets),
            FlattenRcNetworksArgs {
                node_offsets: self.node_offsets.view(),
                resistor_offsets: self.resistor_offsets.view(),
                ground: self.ground.view(),
                ends: self.ends.view(),
                ohms: self.ohms.view(),
                roots: self.roots.view(),
                adjacency_start: self.adjacency_start.cells(),
                fill: self.fill.cells(),
                adjacency: self.adjacency.cells(),
                adjacency_ohms: self.adjacency_ohms.cells(),
                new_index: self.new_index.cells(),
                order: self.order.cells(),
                parent: self.parent.cells(),
                res: self.res.cells(),
                ground_out: self.ground_out.cells(),
                placed: self.placed.cells(),
            },
        )
    }

    /// Copies the trees of the last launch back (waits for it).
    pub fn download(&self) -> Result<FlattenedNetworks, GpuError> {
        let gpu = &self.gpu;
        Ok(FlattenedNetworks {
            parent: gpu.download(&self.parent, 0..self.n_nodes)?,
            res: gpu.download(&self.res, 0..self.n_nodes)?,
            ground: gpu.download(&self.ground_out, 0..self.n_nodes)?,
            new_index: gpu.download(&self.new_index, 0..self.n_nodes)?,
            placed: gpu.download(&self.placed, 0..self.n_nets)?,
        })
    }

    /// Runs the kernel `runs` times and returns each run's time in milliseconds
    /// (device events around the launch).
    pub fn time(&self, runs: usize) -> Result<Vec<f64>, GpuError> {
        (0..runs).map(|_| self.gpu.time(|| self.launch())).collect()
    }

    /// Per net, the nodes the last launch placed (waits for it).
    pub fn placed(&self) -> Result<Vec<u32>, GpuError> {
        self.gpu.download(&self.placed, 0..self.n_nets)
    }
}

/// Flattens `batch` on `gpu`: upload, launch, download.
pub fn flatten_networks(
    gpu: &Arc<GpuContext>,
    batch: &RcNetworkBatch,
) -> Result<FlattenedNetworks, GpuError> {
    let networks = DeviceRcNetworks::upload(gpu, batch)?;
    networks.launch()?;
    networks.download()
}

/// The CPU twin of the `flatten_rc_networks` kernel: the same function per net, with
/// rayon over chunks of nets (each owning its nodes' part of the results and reusing
/// its working memory).
pub fn flatten_networks_on_cpu(batch: &RcNetworkBatch) -> FlattenedNetworks {
    use rayon::prelude::*;
    use std::cell::Cell;
    use tachyon_kernels::rc_flatten::{flatten_net, FlattenMemory};
    const NETS_PER_CHUNK: usize = 1024;
    let n_nodes = batch.n_nodes();
    let mut flattened = FlattenedNetworks {
        parent: vec![0; n_nodes],
        res: vec![0.0; n_nodes],
        ground: vec![0.0; n_nodes],
        new_index: vec![0; n_nodes],
        placed: vec![0; batch.n_nets()],
    };
    let offsets = &batch.node_offsets;
    let mut chunks = Vec::new();
    let (mut parent, mut res, mut ground, mut new_index) = (
        &mut flattened.parent[..],
        &mut flattened.res[..],
        &mut flattened.ground[..],
        &mut flattened.new_index[..],
    );
    for (chunk, placed) in flattened.placed.chunks_mut(NETS_PER_CHUNK).enumerate() {
        let first_net = chunk * NETS_PER_CHUNK;
        let last_net = first_net + placed.len();
        let n = (offsets[last_net] - offsets[first_net]) as usize;
        let (chunk_parent, rest_parent) = parent.split_at_mut(n);
        let (chunk_res, rest_res) = res.split_at_mut(n);
        let (chunk_ground, rest_ground) = ground.split_at_mut(n);
        let (chunk_index, rest_index) = new_index.split_at_mut(n);
        (parent, res, ground, new_index) = (rest_parent, rest_res, rest_ground, rest_index);
        chunks.push((
            first_net,
            placed,
            chunk_parent,
            chunk_res,
            chunk_ground,
            chunk_index,
        ));
    }
    chunks
        .into_par_iter()
        .for_each(|(first_net, placed, parent, res, ground, new_index)| {
            let (mut start, mut fill, mut order) = (Vec::new(), Vec::new(), Vec::new());
            let (mut adjacency, mut adjacency_ohms) = (Vec::new(), Vec::new());
            let base = offsets[first_net] as usize;
            for (local, placed) in placed.iter_mut().enumerate() {
                let net = first_net + local;
                let nodes = offsets[net] as usize..offsets[net + 1] as usize;
                let here = nodes.start - base..nodes.end - base;
                let resistors =
                    batch.resistor_offsets[net] as usize..batch.resistor_offsets[net + 1] as usize;
                let (n, r) = (nodes.len(), resistors.len());
                let ends = &batch.ends[resistors.clone()];
                let ohms = &batch.ohms[resistors];
                start.resize(n + 1, 0);
                fill.resize(n, 0);
                order.resize(n, 0);
                adjacency.resize(2 * r, 0);
                adjacency_ohms.resize(2 * r, 0.0);
                let count = flatten_net(
                    &batch.ground[nodes],
                    r,
                    |k| (ends[k][0], ends[k][1], ohms[k]),
                    batch.roots[net],
                    FlattenMemory {
                        adjacency_start: Cell::from_mut(&mut start[..]).as_slice_of_cells(),
                        fill: Cell::from_mut(&mut fill[..]).as_slice_of_cells(),
                        adjacency: Cell::from_mut(&mut adjacency[..]).as_slice_of_cells(),
                        adjacency_ohms: Cell::from_mut(&mut adjacency_ohms[..]).as_slice_of_cells(),
                        new_index: Cell::from_mut(&mut new_index[here.clone()]).as_slice_of_cells(),
                        order: Cell::from_mut(&mut order[..]).as_slice_of_cells(),
                        parent: Cell::from_mut(&mut parent[here.clone()]).as_slice_of_cells(),
                        res: Cell::from_mut(&mut res[here.clone()]).as_slice_of_cells(),
                        ground: Cell::from_mut(&mut ground[here]).as_slice_of_cells(),
                    },
                );
                *placed = count;
            }
        });
    flattened
}

/// The pin entries of a batch of networks, for laying their flattened trees out
/// ([`lay_out_networks_on_cpu`], [`DeviceRcLayout`]): per network its pins (the driver
/// first) with their nodes, local to the network.
#[derive(Debug, Clone, Default)]
pub struct RcNetworkPins {
    pin_offsets: Vec<u32>,
    pins: Vec<u32>,
    pin_nodes: Vec<u32>,
}

impl RcNetworkPins {
    /// Takes the pin entries of `networks`, checked against `batch` (the same networks)
    /// and a graph of `n_pins` pins.
    pub fn from_networks(
        networks: &RcNetworks,
        batch: &RcNetworkBatch,
        n_pins: usize,
    ) -> Result<Self, LayoutError> {
        let pins = RcNetworkPins {
            pin_offsets: networks.pin_offsets.clone(),
            pins: networks.pin_nodes.iter().map(|&(pin, _)| pin.0).collect(),
            pin_nodes: networks.pin_nodes.iter().map(|&(_, node)| node).collect(),
        };
        pins.check(batch, n_pins)?;
        Ok(pins)
    }

    /// The same entries with each one's pin replaced by its place (entry `i` names pin
    /// `i`), and per entry that pin's caps from `pin_cap`: a few nets' networks laid out
    /// without every graph pin's caps going up (the layout reads the same caps).
    pub fn per_entry(
        self,
        pin_cap: impl Fn(u32) -> [f64; N_CONDITIONS] + Sync,
    ) -> (RcNetworkPins, Vec<[f64; N_CONDITIONS]>) {
        use rayon::prelude::*;
        let caps = self
            .pins
            .par_iter()
            .with_min_len(4096)
            .map(|&pin| pin_cap(pin))
            .collect();
        let entries = RcNetworkPins {
            pins: (0..self.pins.len() as u32).collect(),
            ..self
        };
        (entries, caps)
    }

    /// Checks the entries against `batch` and a graph of `n_pins` pins.
    fn check(&self, batch: &RcNetworkBatch, n_pins: usize) -> Result<(), LayoutError> {
        use rayon::prelude::*;
        let n_nets = batch.n_nets();
        check_length("pin_offsets", n_nets + 1, self.pin_offsets.len())?;
        check_starts("pin_offsets", &self.pin_offsets, self.pins.len())?;
        tachyon_gpu::check::check_indices("network pins", &self.pins, n_pins)?;
        let bad_node = (0..n_nets)
            .into_par_iter()
            .with_min_len(4096)
            .find_map_first(|net| {
                let n_nodes = batch.node_offsets[net + 1] - batch.node_offsets[net];
                let entries = self.pin_offsets[net] as usize..self.pin_offsets[net + 1] as usize;
                self.pin_nodes[entries.clone()]
                    .iter()
                    .enumerate()
                    .find(|&(_, &node)| node >= n_nodes)
                    .map(|(at, &node)| LayoutError::IndexOutOfRange {
                        array: "pin nodes (local to their net)",
                        position: entries.start + at,
                        value: node,
                        limit: n_nodes as usize,
                    })
            });
        bad_node.map_or(Ok(()), Err)
    }
}

/// Flattened networks laid out for the RC pass (`rc_nets`): per node its parent, its
/// resistance and its caps interleaved by condition, each network at its output offset.
#[derive(Debug, Clone, PartialEq)]
pub struct LaidOutNetworks {
    pub parent: Vec<u32>,
    pub res: Vec<f64>,
    pub cap: Vec<f64>,
}

/// Checks that `out_offsets` give each network of `placed` its placed nodes.
fn check_out_offsets(out_offsets: &[u32], placed: &[u32]) -> Result<(), LayoutError> {
    check_length("out_offsets", placed.len() + 1, out_offsets.len())?;
    let n_out = out_offsets.last().copied().unwrap_or(0) as usize;
    check_starts("out_offsets", out_offsets, n_out)?;
    for (net, &count) in placed.iter().enumerate() {
        let room = out_offsets[net + 1] - out_offsets[net];
        if room != count {
            return Err(LayoutError::IndexOutOfRange {
                array: "out_offsets (room of a network's placed nodes)",
                position: net,
                value: room,
                limit: count as usize,
            });
        }
    }
    Ok(())
}

/// The CPU twin of the `lay_out_rc_networks` kernel: the same function per net
/// ([`tachyon_kernels::rc_flatten::lay_out_net`]), with rayon over chunks of nets. Net
/// `i` of `flattened` (as [`flatten_networks_on_cpu`] gives it for `batch`) is written
/// at `out_offsets[i]..out_offsets[i + 1]`, which must hold its placed nodes; `pin_cap`
/// holds each graph pin's caps.
pub fn lay_out_networks_on_cpu(
    batch: &RcNetworkBatch,
    flattened: &FlattenedNetworks,
    pins: &RcNetworkPins,
    pin_cap: &[[f64; N_CONDITIONS]],
    out_offsets: &[u32],
) -> Result<LaidOutNetworks, LayoutError> {
    use rayon::prelude::*;
    use std::cell::Cell;
    use tachyon_kernels::rc_flatten::{lay_out_net, FlattenedNet, NetLayout};
    check_out_offsets(out_offsets, &flattened.placed)?;
    tachyon_gpu::check::check_indices("network pins", &pins.pins, pin_cap.len())?;
    const NETS_PER_CHUNK: usize = 1024;
    let n_out = out_offsets.last().copied().unwrap_or(0) as usize;
    let mut laid_out = LaidOutNetworks {
        parent: tachyon_graph::filled(n_out, 0),
        res: tachyon_graph::filled(n_out, 0.0),
        cap: tachyon_graph::filled(n_out * N_CONDITIONS, 0.0),
    };
    let mut chunks = Vec::new();
    let (mut parent, mut res, mut cap) = (
        &mut laid_out.parent[..],
        &mut laid_out.res[..],
        &mut laid_out.cap[..],
    );
    let n_nets = flattened.placed.len();
    for first_net in (0..n_nets).step_by(NETS_PER_CHUNK) {
        let last_net = (first_net + NETS_PER_CHUNK).min(n_nets);
        let n = (out_offsets[last_net] - out_offsets[first_net]) as usize;
        let (chunk_parent, rest_parent) = parent.split_at_mut(n);
        let (chunk_res, rest_res) = res.split_at_mut(n);
        let (chunk_cap, rest_cap) = cap.split_at_mut(n * N_CONDITIONS);
        (parent, res, cap) = (rest_parent, rest_res, rest_cap);
        chunks.push((first_net..last_net, chunk_parent, chunk_res, chunk_cap));
    }
    chunks.into_par_iter().for_each(|(nets, parent, res, cap)| {
        let base = out_offsets[nets.start] as usize;
        let (parent, res, cap) = (
            Cell::from_mut(parent).as_slice_of_cells(),
            Cell::from_mut(res).as_slice_of_cells(),
            Cell::from_mut(cap).as_slice_of_cells(),
        );
        for net in nets {
            let start = batch.node_offsets[net] as usize;
            let tree = start..start + flattened.placed[net] as usize;
            let nodes = start..batch.node_offsets[net + 1] as usize;
            let entries = pins.pin_offsets[net] as usize..pins.pin_offsets[net + 1] as usize;
            let out = out_offsets[net] as usize - base..out_offsets[net + 1] as usize - base;
            lay_out_net(
                FlattenedNet {
                    parent: &flattened.parent[tree.clone()],
                    res: &flattened.res[tree.clone()],
                    ground: &flattened.ground[tree],
                    new_index: &flattened.new_index[nodes],
                },
                &pins.pins[entries.clone()],
                &pins.pin_nodes[entries],
                |pin| pin_cap[pin as usize],
                NetLayout {
                    parent: &parent[out.clone()],
                    res: &res[out.clone()],
                    cap: &cap[out.start * N_CONDITIONS..out.end * N_CONDITIONS],
                },
            );
        }
    });
    Ok(laid_out)
}

/// Flattened networks laid out on a GPU (the `lay_out_rc_networks` kernel), from a
/// [`DeviceRcNetworks`] after its launch: the pin entries, the pins' caps and the output
/// offsets uploaded, and room for the layout.
pub struct DeviceRcLayout {
    gpu: Arc<GpuContext>,
    n_out: usize,
    pin_offsets: DeviceBuffer<u32>,
    pins: DeviceBuffer<u32>,
    pin_nodes: DeviceBuffer<u32>,
    pin_cap: DeviceBuffer<[f64; N_CONDITIONS]>,
    out_offsets: DeviceBuffer<u32>,
    parent: DeviceBuffer<u32>,
    res: DeviceBuffer<f64>,
    cap: DeviceBuffer<f64>,
}

impl std::fmt::Debug for DeviceRcLayout {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("DeviceRcLayout")
            .field("n_out", &self.n_out)
            .finish()
    }
}

impl DeviceRcLayout {
    /// Uploads what laying out `networks`' trees needs: `out_offsets` must give each
    /// network the nodes the flattening places (as the graph's trees count them: the
    /// kernel traps otherwise), `pin_cap` every graph pin's caps.
    pub fn upload(
        networks: &DeviceRcNetworks,
        pins: &RcNetworkPins,
        pin_cap: &[[f64; N_CONDITIONS]],
        out_offsets: &[u32],
    ) -> Result<Self, GpuError> {
        const DURING: &str = "uploading the RC layout's inputs";
        let gpu = &networks.gpu;
        check_length("out_offsets", networks.n_nets + 1, out_offsets.len())?;
        let n_out = out_offsets.last().copied().unwrap_or(0) as usize;
        check_starts("out_offsets", out_offsets, n_out)?;
        tachyon_gpu::check::check_indices("network pins", &pins.pins, pin_cap.len())?;
        Ok(DeviceRcLayout {
            gpu: Arc::clone(gpu),
            n_out,
            pin_offsets: gpu.upload(DURING, &pins.pin_offsets)?,
            pins: gpu.upload(DURING, &pins.pins)?,
            pin_nodes: gpu.upload(DURING, &pins.pin_nodes)?,
            pin_cap: gpu.upload(DURING, pin_cap)?,
            out_offsets: gpu.upload(DURING, out_offsets)?,
            parent: gpu.allocate(DURING, n_out)?,
            res: gpu.allocate(DURING, n_out)?,
            cap: gpu.allocate(DURING, n_out * N_CONDITIONS)?,
        })
    }

    /// Queues the `lay_out_rc_networks` kernel over `networks`' flattened trees (a
    /// thread per net; returns before it finishes).
    pub fn launch(&self, networks: &DeviceRcNetworks) -> Result<(), GpuError> {
        if networks.n_nets == 0 {
            return Ok(());
        }
        self.gpu.launch(
            super::device::per_item(networks.n_nets),
            LayOutRcNetworksArgs {
                node_offsets: networks.node_offsets.view(),
                placed: networks.placed.view(),
                parent: networks.parent.view(),
                res: networks.res.view(),
                ground: networks.ground_out.view(),
                new_index: networks.new_index.view(),
                pin_offsets: self.pin_offsets.view(),
                pins: self.pins.view(),
                pin_nodes: self.pin_nodes.view(),
                pin_cap: self.pin_cap.view(),
                out_offsets: self.out_offsets.view(),
                out_parent: self.parent.cells(),
                out_res: self.res.cells(),
                out_cap: self.cap.cells(),
            },
        )
    }

    /// The layout as the RC pass's batch (`rc_nets`), with room for its results: the
    /// output offsets are the batch's net offsets.
    pub fn into_rc_nets(self) -> Result<DeviceRcNets, GpuError> {
        const DURING: &str = "the RC layout made on the GPU";
        let n_nets = self.out_offsets.len().saturating_sub(1);
        if n_nets > super::layout::MAX_NETS {
            return Err(LayoutError::TooLarge {
                what: "nets",
                count: n_nets,
                limit: super::layout::MAX_NETS,
            }
            .into());
        }
        let n_values = self.n_out * N_CONDITIONS;
        let gpu = &self.gpu;
        Ok(DeviceRcNets {
            gpu: Arc::clone(gpu),
            n_nets: n_nets as u32,
            n_nodes: self.n_out as u32,
            load: gpu.allocate(DURING, n_values)?,
            delay: gpu.allocate(DURING, n_values)?,
            impulse: gpu.allocate(DURING, n_values)?,
            net_offsets: self.out_offsets,
            parent: self.parent,
            res: self.res,
            cap: self.cap,
        })
    }

    /// Copies the layout of the last launch back (waits for it).
    pub fn download(&self) -> Result<LaidOutNetworks, GpuError> {
        let gpu = &self.gpu;
        Ok(LaidOutNetworks {
            parent: gpu.download(&self.parent, 0..self.n_out)?,
            res: gpu.download(&self.res, 0..self.n_out)?,
            cap: gpu.download(&self.cap, 0..self.n_out * N_CONDITIONS)?,
        })
    }

    /// Runs the kernel `runs` times and returns each run's time in milliseconds
    /// (device events around the launch).
    pub fn time(&self, networks: &DeviceRcNetworks, runs: usize) -> Result<Vec<f64>, GpuError> {
        (0..runs)
            .map(|_| self.gpu.time(|| self.launch(networks)))
            .collect()
    }
}
