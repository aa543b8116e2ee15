//! The kernel ABI: what crosses from the host to a GPU entry point.
//!
//! Every kernel takes one argument, a `#[repr(C)]` struct declared here and used by
//! both sides: the entry point (`ptx_entry`, `ptx_paths`) reads it, the host fills it
//! and hands it to the GPU runtime (`tachyon-gpu`), whose `launch` is typed by it.
//! [`Kernel`] lists every entry point; the runtime loads them all when it loads the
//! PTX, and a test and `cargo xtask ptx` check each one's name and parameter size
//! against the PTX.
//!
//! Device arrays travel as views: [`DeviceSlice`] (read by the launch) and
//! [`DeviceCells`] (written by it, each element by one thread, or atomically), an
//! address and a length in elements. Only the runtime makes views, from its live
//! buffers ([`DeviceSlice::from_raw`] is `unsafe` for that reason); host code narrows
//! them ([`DeviceSlice::slice`]) but cannot forge them. Before a launch the runtime
//! checks that no written view overlaps another view of the same launch
//! ([`Arrays::visit_arrays`]); the entry points index through slices of the views'
//! true lengths, so a bad index traps instead of reading stray memory.
//!
//! `unsafe` is allowed in this module for the view constructor, the device-side
//! accessors and the [`DeviceCopy`] impls: it is the entry points' half of the ABI.
#![allow(unsafe_code)]

use core::marker::PhantomData;
use core::ops::Range;

use crate::cppr::{EntryGroups, GroupInput, ShapeInput, Top2};
use crate::propagate::{ArcDescriptor, TableDescriptor, TestDescriptor};
use crate::seeds::TestSeedInputs;
use crate::N_CONDITIONS;

/// Plain data that may be copied between host and device memory as bytes.
///
/// # Safety
///
/// The type has no padding and no pointers, and every bit pattern is a valid value
/// (integers, floats, arrays and `repr(C)` structs of those).
pub unsafe trait DeviceCopy: Copy + Send + Sync + 'static {}

// SAFETY: primitive integers and floats: no padding, every bit pattern valid.
unsafe impl DeviceCopy for u8 {}
// SAFETY: as above.
unsafe impl DeviceCopy for u32 {}
// SAFETY: as above.
unsafe impl DeviceCopy for u64 {}
// SAFETY: as above.
unsafe impl DeviceCopy for f64 {}
// SAFETY: an array of plain data is plain data (no padding between elements).
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}
// SAFETY: `repr(C)`: two `f64` then two `u32`, 24 bytes, no padding.
unsafe impl DeviceCopy for Top2 {}
// SAFETY: `repr(C)`: two `u32` then six `f64`, 56 bytes, no padding.
unsafe impl DeviceCopy for GroupInput {}
// SAFETY: `repr(C)`: five `u32`, 20 bytes, no padding.
unsafe impl DeviceCopy for ShapeInput {}
// SAFETY: `repr(C)`: six `f64`, 48 bytes, no padding.
unsafe impl DeviceCopy for TestSeedInputs {}

/// A device array a launch reads: the address of its first element and its length.
#[repr(C)]
pub struct DeviceSlice<'a, T> {
    address: u64,
    len: u64,
    _borrow: PhantomData<&'a [T]>,
}

/// A device array a launch writes (each element by one thread, or atomically) and may
/// read: the address of its first element and its length.
#[repr(C)]
pub struct DeviceCells<'a, T> {
    address: u64,
    len: u64,
    _borrow: PhantomData<&'a [T]>,
}

/// The views' shared methods.
macro_rules! view_methods {
    ($view:ident, written: $written:expr) => {
        impl<T> Clone for $view<'_, T> {
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<T> Copy for $view<'_, T> {}

        impl<T> core::fmt::Debug for $view<'_, T> {
            fn fmt(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(
                    formatter,
                    "{}[{:#x}; {}]",
                    stringify!($view),
                    self.address,
                    self.len
                )
            }
        }

        impl<'a, T> $view<'a, T> {
            /// A view of `len` elements at `address`.
            ///
            /// # Safety
            ///
            /// `address` is the start of `len` initialised values of `T` in device memory
            /// that stay allocated for `'a`. The GPU runtime makes views of its buffers;
            /// nothing else should.
            #[inline]
            pub unsafe fn from_raw(address: u64, len: usize) -> Self {
                $view {
                    address,
                    len: len as u64,
                    _borrow: PhantomData,
                }
            }

            /// The number of elements.
            #[inline]
            pub fn len(&self) -> usize {
                self.len as usize
            }

            #[inline]
            pub fn is_empty(&self) -> bool {
                self.len == 0
            }

            /// The device address of the first element.
            #[inline]
            pub fn address(&self) -> u64 {
                self.address
            }

            /// The elements `range` of this view.
            ///
            /// # Panics
            ///
            /// When `range` does not lie inside the view.
            #[inline]
            pub fn slice(self, range: Range<usize>) -> Self {
                assert!(
                    range.start <= range.end && range.end <= self.len(),
                    "a view can only narrow"
                );
                $view {
                    address: self.address + (range.start * core::mem::size_of::<T>()) as u64,
                    len: (range.end - range.start) as u64,
                    _borrow: PhantomData,
                }
            }
        }

        impl<'a, T, const N: usize> $view<'a, [T; N]> {
            /// The same elements as a view of their items (`N` per element).
            #[inline]
            pub fn flatten(self) -> $view<'a, T> {
                $view {
                    address: self.address,
                    len: self.len * N as u64,
                    _borrow: PhantomData,
                }
            }
        }

        #[cfg(not(target_arch = "nvptx64"))]
        impl<T> Arrays for $view<'_, T> {
            fn visit_arrays(&self, visit: &mut dyn FnMut(ArrayUse)) {
                visit(ArrayUse {
                    address: self.address,
                    bytes: self.len * core::mem::size_of::<T>() as u64,
                    written: $written,
                });
            }
        }
    };
}

view_methods!(DeviceSlice, written: false);
view_methods!(DeviceCells, written: true);

impl<'a, T> DeviceCells<'a, T> {
    /// The same elements as a view that only reads them.
    #[inline]
    pub fn read_only(self) -> DeviceSlice<'a, T> {
        DeviceSlice {
            address: self.address,
            len: self.len,
            _borrow: PhantomData,
        }
    }
}

/// The device-side accessors, for the entry points.
#[cfg(target_arch = "nvptx64")]
mod device {
    use core::cell::Cell;
    use core::sync::atomic::AtomicU32;

    use super::{DeviceCells, DeviceSlice};

    impl<'a, T> DeviceSlice<'a, T> {
        /// The elements, read by the launch.
        ///
        /// # Safety
        ///
        /// The view was made by the runtime (so it addresses `len` live values), no
        /// written view of the launch overlaps it (the runtime checks this), and no
        /// other work writes it during the launch.
        #[inline]
        pub unsafe fn get(self) -> &'a [T] {
            // SAFETY: see the function's contract.
            unsafe { core::slice::from_raw_parts(self.address as *const T, self.len as usize) }
        }
    }

    impl<'a, T> DeviceCells<'a, T> {
        /// The elements as cells: each written by one thread of the launch, read by
        /// that thread or only where no thread of the launch writes.
        ///
        /// # Safety
        ///
        /// The view was made by the runtime and no other view of the launch overlaps
        /// it; the kernel keeps to one writer per element.
        #[inline]
        pub unsafe fn cells(self) -> &'a [Cell<T>] {
            // SAFETY: see the function's contract; `Cell<T>` has the layout of `T`.
            unsafe {
                core::slice::from_raw_parts(self.address as *const Cell<T>, self.len as usize)
            }
        }
    }

    impl<'a> DeviceCells<'a, u32> {
        /// The elements as atomics (every access of the launch atomic).
        ///
        /// # Safety
        ///
        /// As for [`DeviceCells::cells`], every thread touching them atomically.
        #[inline]
        pub unsafe fn atomics(self) -> &'a [AtomicU32] {
            // SAFETY: see the function's contract; `AtomicU32` has the layout of `u32`.
            unsafe {
                core::slice::from_raw_parts(self.address as *const AtomicU32, self.len as usize)
            }
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
/// One device array of a launch, for the runtime's overlap check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayUse {
    pub address: u64,
    pub bytes: u64,
    /// Whether the launch writes it.
    pub written: bool,
}

#[cfg(not(target_arch = "nvptx64"))]
/// The device arrays an argument struct (or one of its fields) names.
pub trait Arrays {
    fn visit_arrays(&self, visit: &mut dyn FnMut(ArrayUse));
}

macro_rules! no_arrays {
    ($($scalar:ty),*) => {
        $(#[cfg(not(target_arch = "nvptx64"))]
        impl Arrays for $scalar {
            fn visit_arrays(&self, _: &mut dyn FnMut(ArrayUse)) {}
        })*
    };
}

no_arrays!(u32, u64, f64);

#[cfg(not(target_arch = "nvptx64"))]
mod sealed {
    /// Only this crate declares kernel arguments.
    pub trait Sealed {}
}

#[cfg(not(target_arch = "nvptx64"))]
/// The argument struct of a kernel: a launch passes it by value as the kernel's one
/// parameter.
pub trait KernelArgs: Arrays + Copy + sealed::Sealed {
    const KERNEL: Kernel;
}

/// Declares a `#[repr(C)]` argument struct (or a part of one) and the arrays it names.
macro_rules! arguments {
    ($(
        $(#[$meta:meta])*
        pub struct $name:ident<'a> {
            $($(#[$field_meta:meta])* pub $field:ident: $type:ty,)*
        }
    )*) => {$(
        $(#[$meta])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy)]
        pub struct $name<'a> {
            $($(#[$field_meta])* pub $field: $type,)*
        }

        #[cfg(not(target_arch = "nvptx64"))]
        impl Arrays for $name<'_> {
            fn visit_arrays(&self, visit: &mut dyn FnMut(ArrayUse)) {
                $(Arrays::visit_arrays(&self.$field, visit);)*
            }
        }
    )*};
}

/// Declares [`Kernel`] from the entry points' names and argument structs.
macro_rules! kernels {
    ($($variant:ident: $entry:ident($args:ident),)*) => {
        /// Every kernel of the PTX.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Kernel {
            $($variant,)*
        }

        impl Kernel {
            /// Every kernel, in declaration order (`kernel as usize` is its place).
            pub const ALL: &'static [Kernel] = &[$(Kernel::$variant,)*];

            /// The entry point's name in the PTX.
            pub fn name(self) -> &'static str {
                match self {
                    $(Kernel::$variant => stringify!($entry),)*
                }
            }

            /// The size of the kernel's one parameter, its argument struct.
            pub fn param_bytes(self) -> usize {
                match self {
                    $(Kernel::$variant => core::mem::size_of::<$args<'static>>(),)*
                }
            }
        }

        $(
            #[cfg(not(target_arch = "nvptx64"))]
            impl sealed::Sealed for $args<'_> {}

            #[cfg(not(target_arch = "nvptx64"))]
            impl KernelArgs for $args<'_> {
                const KERNEL: Kernel = Kernel::$variant;
            }
        )*
    };
}

kernels! {
    RcNets: rc_nets(RcNetsArgs),
    FlattenRcNetworks: flatten_rc_networks(FlattenRcNetworksArgs),
    LayOutRcNetworks: lay_out_rc_networks(LayOutRcNetworksArgs),
    GatherParasitics: gather_parasitics(GatherParasiticsArgs),
    ForwardLevel: forward_level(ForwardLevelArgs),
    EvaluateTests: evaluate_tests(EvaluateTestsArgs),
    BackwardLevel: backward_level(BackwardLevelArgs),
    ScatterQuads: scatter_quads(ScatterQuadsArgs),
    RequiredSeeds: required_seeds(RequiredSeedsArgs),
    GatherQuads: gather_quads(GatherQuadsArgs),
    ChangedWords: changed_words(ChangedWordsArgs),
    FillF64: fill_f64(FillArgs),
    LevelizeWaits: levelize_waits(LevelizeWaitsArgs),
    LevelizeExclude: levelize_exclude(LevelizeExcludeArgs),
    LevelizeSources: levelize_sources(LevelizeSourcesArgs),
    LevelizeFrontier: levelize_frontier(LevelizeFrontierArgs),
    CpprFill: cppr_fill(CpprFillArgs),
    CpprLevel: cppr_level(CpprLevelArgs),
    CpprGather: cppr_gather(CpprGatherArgs),
    CpprCombine: cppr_combine(CpprCombineArgs),
    PathsForestLevel: paths_forest_level(PathsForestLevelArgs),
    PathsRoots: paths_roots(PathsRootsArgs),
    PathsCount: paths_count(PathsCountArgs),
    PathsExpand: paths_expand(PathsExpandArgs),
    PathsChunkSums: paths_chunk_sums(PathsChunkSumsArgs),
    PathsChunkOffsets: paths_chunk_offsets(PathsChunkOffsetsArgs),
    PathsHistogram: paths_histogram(PathsHistogramArgs),
    PathsFlagAtMost: paths_flag_at_most(PathsFlagAtMostArgs),
    PathsGather: paths_gather(PathsGatherArgs),
    PathsMarkKept: paths_mark_kept(PathsMarkKeptArgs),
    PathsCompact: paths_compact(PathsCompactArgs),
    LcaLocalIndex: lca_local_index(LcaLocalIndexArgs),
    LcaParent: lca_parent(LcaParentArgs),
    LcaPlace: lca_place(LcaPlaceArgs),
    LcaSuccessor: lca_successor(LcaSuccessorArgs),
    LcaRankJump: lca_rank_jump(LcaRankJumpArgs),
    LcaEnter: lca_enter(LcaEnterArgs),
    LcaTableLevel: lca_table_level(LcaTableLevelArgs),
    LcaRootInit: lca_root_init(LcaRootInitArgs),
    LcaRootJump: lca_root_jump(LcaRootJumpArgs),
    PathsEdgeCounts: paths_edge_counts(PathsEdgeCountsArgs),
    PathsEdgeWrite: paths_edge_write(PathsEdgeWriteArgs),
    PathsTreeArrays: paths_tree_arrays(PathsTreeArraysArgs),
}

// Graph-based analysis (`tachyon-gba`): RC, gathers, level sweeps, tests, levelization.
arguments! {
    /// The RC passes of a batch of nets (layout: [`crate::rc`]), a thread per (net,
    /// condition); nets of at most `shared_nodes_per_net` nodes are computed in the
    /// block's dynamic shared memory (see the entry point).
    pub struct RcNetsArgs<'a> {
        /// `n_nets + 1` ascending offsets, from 0 to the node count.
        pub net_offsets: DeviceSlice<'a, u32>,
        pub parent: DeviceSlice<'a, u32>,
        pub res: DeviceSlice<'a, f64>,
        /// Per node and condition (interleaved).
        pub cap: DeviceSlice<'a, f64>,
        pub load: DeviceCells<'a, f64>,
        pub delay: DeviceCells<'a, f64>,
        pub impulse: DeviceCells<'a, f64>,
        pub shared_nodes_per_net: u32,
    }

    /// Flattening a batch of resistor networks into BFS trees
    /// ([`crate::rc_flatten::flatten_net`]), a thread per net. Net `i` owns the nodes
    /// `node_offsets[i]..node_offsets[i + 1]` of every per-node array, the entries
    /// `node_offsets[i] + i..node_offsets[i + 1] + i + 1` of `adjacency_start`, the
    /// resistors `resistor_offsets[i]..resistor_offsets[i + 1]` and twice those of the
    /// adjacency arrays. Node indices (resistor ends, roots) are local to their net.
    pub struct FlattenRcNetworksArgs<'a> {
        pub node_offsets: DeviceSlice<'a, u32>,
        pub resistor_offsets: DeviceSlice<'a, u32>,
        pub ground: DeviceSlice<'a, f64>,
        pub ends: DeviceSlice<'a, [u32; 2]>,
        pub ohms: DeviceSlice<'a, f64>,
        pub roots: DeviceSlice<'a, u32>,
        pub adjacency_start: DeviceCells<'a, u32>,
        pub fill: DeviceCells<'a, u32>,
        pub adjacency: DeviceCells<'a, u32>,
        pub adjacency_ohms: DeviceCells<'a, f64>,
        pub new_index: DeviceCells<'a, u32>,
        pub order: DeviceCells<'a, u32>,
        /// The trees: per node, of which each net's first `placed[i]` are written.
        pub parent: DeviceCells<'a, u32>,
        pub res: DeviceCells<'a, f64>,
        pub ground_out: DeviceCells<'a, f64>,
        /// Per net, the nodes placed.
        pub placed: DeviceCells<'a, u32>,
    }

    /// After `flatten_rc_networks`: laying its trees out for `rc_nets`
    /// ([`crate::rc_flatten::lay_out_net`]), a thread per net. Net `i` reads the nodes
    /// `node_offsets[i]..node_offsets[i + 1]` of the flattened arrays (of which the first
    /// `placed[i]` hold its tree) and its pin entries `pin_offsets[i]..pin_offsets[i + 1]`
    /// (the driver first, nodes local to the net), and writes the nodes
    /// `out_offsets[i]..out_offsets[i + 1]` (`placed[i]` of them) of the layout.
    pub struct LayOutRcNetworksArgs<'a> {
        pub node_offsets: DeviceSlice<'a, u32>,
        pub placed: DeviceSlice<'a, u32>,
        pub parent: DeviceSlice<'a, u32>,
        pub res: DeviceSlice<'a, f64>,
        pub ground: DeviceSlice<'a, f64>,
        pub new_index: DeviceSlice<'a, u32>,
        pub pin_offsets: DeviceSlice<'a, u32>,
        pub pins: DeviceSlice<'a, u32>,
        pub pin_nodes: DeviceSlice<'a, u32>,
        /// Per pin of the graph, its caps by condition.
        pub pin_cap: DeviceSlice<'a, [f64; N_CONDITIONS]>,
        pub out_offsets: DeviceSlice<'a, u32>,
        /// The layout `rc_nets` reads: per node, caps interleaved by condition.
        pub out_parent: DeviceCells<'a, u32>,
        pub out_res: DeviceCells<'a, f64>,
        pub out_cap: DeviceCells<'a, f64>,
    }

    /// After `rc_nets`: thread `i` writes the wire delay and impulse of pin `i` and the
    /// driver load of net `i`.
    pub struct GatherParasiticsArgs<'a> {
        /// Per pin, the RC node its wire values come from ([`crate::propagate::NONE`]:
        /// zeros).
        pub pin_source: DeviceSlice<'a, u32>,
        /// Per net, its root node (`NONE`: `net_lumped` is its load).
        pub net_root: DeviceSlice<'a, u32>,
        pub net_lumped: DeviceSlice<'a, [f64; 4]>,
        /// The RC pass's results, interleaved by condition.
        pub node_load: DeviceSlice<'a, f64>,
        pub node_delay: DeviceSlice<'a, f64>,
        pub node_impulse: DeviceSlice<'a, f64>,
        pub net_load: DeviceCells<'a, [f64; 4]>,
        pub wire_delay: DeviceCells<'a, [f64; 4]>,
        pub wire_impulse: DeviceCells<'a, [f64; 4]>,
    }

    /// One level of a sweep and the CSR the step walks (fan-in forward, fan-out
    /// backward): a thread per pin of `pins`.
    pub struct LevelSweep<'a> {
        pub pins: DeviceSlice<'a, u32>,
        /// `n_pins + 1` offsets into `csr_arcs`.
        pub csr_start: DeviceSlice<'a, u32>,
        pub csr_arcs: DeviceSlice<'a, u32>,
        pub arcs: DeviceSlice<'a, ArcDescriptor>,
    }

    /// The forward step of one level ([`crate::propagate::forward_pin`]).
    pub struct ForwardLevelArgs<'a> {
        pub level: LevelSweep<'a>,
        pub pin_net: DeviceSlice<'a, u32>,
        pub net_load: DeviceSlice<'a, [f64; 4]>,
        pub tables: DeviceSlice<'a, TableDescriptor>,
        pub table_data: DeviceSlice<'a, f64>,
        pub wire_delay: DeviceSlice<'a, [f64; 4]>,
        pub wire_impulse: DeviceSlice<'a, [f64; 4]>,
        pub arrival: DeviceCells<'a, [f64; 4]>,
        pub slew: DeviceCells<'a, [f64; 4]>,
        pub arc_delay: DeviceCells<'a, [f64; 4]>,
    }

    /// Test evaluation ([`crate::propagate::evaluate_test`]), a thread per test.
    pub struct EvaluateTestsArgs<'a> {
        pub tests: DeviceSlice<'a, TestDescriptor>,
        pub period: f64,
        pub arrival: DeviceSlice<'a, [f64; 4]>,
        pub slew: DeviceSlice<'a, [f64; 4]>,
        pub tables: DeviceSlice<'a, TableDescriptor>,
        pub table_data: DeviceSlice<'a, f64>,
        /// Per test, the two pre-CPPR required times.
        pub required: DeviceCells<'a, [f64; 2]>,
    }

    /// The backward step of one level ([`crate::propagate::backward_pin`]); a pin with
    /// a wide fan-out is walked by its whole block (the launch gives each block
    /// [`backward_level_shared_bytes`] of dynamic shared memory).
    pub struct BackwardLevelArgs<'a> {
        pub level: LevelSweep<'a>,
        pub arc_delay: DeviceSlice<'a, [f64; 4]>,
        pub seed: DeviceSlice<'a, [f64; 4]>,
        pub required: DeviceCells<'a, [f64; 4]>,
    }

    /// Thread `i` writes the seeds of pin `pins[i]` into `seed`
    /// ([`crate::seeds::seed_pin`] of its terms `terms[term_start[i]..term_start[i + 1]]`
    /// over its assertion `initial[i]`; each pin once).
    pub struct RequiredSeedsArgs<'a> {
        pub pins: DeviceSlice<'a, u32>,
        pub initial: DeviceSlice<'a, [f64; 4]>,
        pub term_start: DeviceSlice<'a, u32>,
        pub terms: DeviceSlice<'a, u32>,
        pub tests: DeviceSlice<'a, TestSeedInputs>,
        pub arrival: DeviceSlice<'a, [f64; 4]>,
        pub seed: DeviceCells<'a, [f64; 4]>,
    }

    /// `out[index[i]] = values[i]` (each index once; an index past `out` is skipped).
    pub struct ScatterQuadsArgs<'a> {
        pub index: DeviceSlice<'a, u32>,
        pub values: DeviceSlice<'a, [f64; 4]>,
        pub out: DeviceCells<'a, [f64; 4]>,
    }

    /// `out[i] = values[index[i]]` (an index past `values` gives no value).
    pub struct GatherQuadsArgs<'a> {
        pub index: DeviceSlice<'a, u32>,
        pub values: DeviceSlice<'a, [f64; 4]>,
        pub out: DeviceCells<'a, [f64; 4]>,
    }

    /// Thread `w` writes word `w` of the changes from `old` to `new`
    /// ([`crate::changes::changed_word`]).
    pub struct ChangedWordsArgs<'a> {
        pub old: DeviceSlice<'a, [f64; 4]>,
        pub new: DeviceSlice<'a, [f64; 4]>,
        pub words: DeviceCells<'a, u32>,
    }

    /// Sets every element of `out` to `value`.
    pub struct FillArgs<'a> {
        pub out: DeviceCells<'a, f64>,
        pub value: f64,
    }

    /// Levelization ([`crate::levelize`]), first step: every pin waits for its fan-in.
    pub struct LevelizeWaitsArgs<'a> {
        pub fanin_start: DeviceSlice<'a, u32>,
        pub remaining: DeviceCells<'a, u32>,
    }

    /// The primary inputs are not sources to collect: they wait forever.
    pub struct LevelizeExcludeArgs<'a> {
        pub pins: DeviceSlice<'a, u32>,
        pub remaining: DeviceCells<'a, u32>,
    }

    /// The other pins without fan-in join level 0, appended to `out` through `counter`.
    pub struct LevelizeSourcesArgs<'a> {
        pub remaining: DeviceSlice<'a, u32>,
        pub out: DeviceCells<'a, u32>,
        pub counter: DeviceCells<'a, u32>,
    }

    /// One frontier releases its fan-out; the pins released by their last arc are
    /// appended to `out` through `counter`.
    pub struct LevelizeFrontierArgs<'a> {
        pub frontier: DeviceSlice<'a, u32>,
        pub fanout_start: DeviceSlice<'a, u32>,
        pub fanout_arcs: DeviceSlice<'a, u32>,
        pub arcs: DeviceSlice<'a, ArcDescriptor>,
        pub remaining: DeviceCells<'a, u32>,
        pub out: DeviceCells<'a, u32>,
        pub counter: DeviceCells<'a, u32>,
    }
}

// CPPR (`tachyon-cppr`): filling a split's network, the grouping passes.
arguments! {
    /// Fills one split's CPPR network from its shape and the timing data on the device
    /// ([`crate::cppr::fill_input`]), a thread per input.
    pub struct CpprFillArgs<'a> {
        /// 0 early, 1 late.
        pub split: u32,
        pub shape: DeviceSlice<'a, ShapeInput>,
        pub arc_delay: DeviceSlice<'a, [f64; 4]>,
        pub arrival: DeviceSlice<'a, [f64; 4]>,
        pub slew: DeviceSlice<'a, [f64; 4]>,
        /// The start points' clock nodes but the primary inputs' slot.
        pub launch_nodes: DeviceSlice<'a, u32>,
        pub out: DeviceCells<'a, GroupInput>,
    }

    /// One level of `n_passes` grouping passes at once ([`crate::cppr::entry_groups`]):
    /// a thread per pass `p` and entry `first + i`, `i < n_level`. Pass `p` reads its
    /// groups at `start_group[p * n_starts..]` and its entries at
    /// `arrivals[p * n_entries..]`.
    pub struct CpprLevelArgs<'a> {
        pub first: u32,
        pub n_level: u32,
        /// 1 for the late split.
        pub late: u32,
        pub n_passes: u32,
        /// Start points (and entries) per pass: the passes' strides.
        pub n_starts: u32,
        pub n_entries: u32,
        pub input_start: DeviceSlice<'a, u32>,
        pub inputs: DeviceSlice<'a, GroupInput>,
        /// Each pass's group of each start point.
        pub start_group: DeviceSlice<'a, u32>,
        pub arrivals: DeviceCells<'a, EntryGroups>,
    }

    /// `out[p * wanted.len() + i] = arrivals[p * n_entries + wanted[i]]` for each of the
    /// `n_passes` passes.
    pub struct CpprGatherArgs<'a> {
        pub n_passes: u32,
        pub n_entries: u32,
        pub wanted: DeviceSlice<'a, u32>,
        pub arrivals: DeviceSlice<'a, EntryGroups>,
        pub out: DeviceCells<'a, EntryGroups>,
    }

    /// Combines one split's passes at its tests ([`crate::cppr::combine_test`]), a
    /// thread per test position `i < required.len()`: its passes' entries are
    /// `entries[p * required.len() + i]` (pass 0 seeded by the primary inputs), and
    /// `post[i]` gets its post-CPPR slacks. The clock tree is given per node slot:
    /// `node` (the group label, `pin * 2 + transition`), `parent` (a slot; the root's
    /// is itself), `depth` and `spread`; `capture[i]` is the slot of test `i`'s capture
    /// node (`u32::MAX`: not in the tree). `pass_at[d - 1]` is, for depth `d` in
    /// `1..=max_depth`, the depth of the pass that stands for it and that pass's index
    /// (`u32::MAX`: none).
    pub struct CpprCombineArgs<'a> {
        /// 1 for the late split.
        pub late: u32,
        pub max_depth: u32,
        pub required: DeviceSlice<'a, [f64; 2]>,
        pub capture: DeviceSlice<'a, u32>,
        pub node: DeviceSlice<'a, u32>,
        pub parent: DeviceSlice<'a, u32>,
        pub depth: DeviceSlice<'a, u32>,
        pub spread: DeviceSlice<'a, f64>,
        pub pass_at: DeviceSlice<'a, [u32; 2]>,
        pub entries: DeviceSlice<'a, EntryGroups>,
        pub post: DeviceCells<'a, [f64; 2]>,
    }
}

// The top-k path search (`tachyon-paths`, [`crate::path_search`]).
arguments! {
    /// The in-edges of every node ([`crate::path_search::PathGraph`]).
    pub struct PathGraphArrays<'a> {
        pub nodes_per_split: u32,
        pub edge_start: DeviceSlice<'a, u32>,
        pub edge_from: DeviceSlice<'a, u32>,
        pub edge_launch: DeviceSlice<'a, u32>,
        pub edge_value: DeviceSlice<'a, f64>,
    }

    /// One topological level of the forest: a thread per node of `level_nodes`.
    pub struct PathsForestLevelArgs<'a> {
        pub level_nodes: DeviceSlice<'a, u32>,
        pub graph: PathGraphArrays<'a>,
        pub arrival: DeviceCells<'a, f64>,
        pub best_edge: DeviceCells<'a, u32>,
        pub start: DeviceCells<'a, u32>,
    }

    /// Everything the candidate kernels read ([`crate::path_search::SearchInputs`]);
    /// `lca_positions == 0`: no LCA table, common points by walking up.
    pub struct SearchArrays<'a> {
        pub graph: PathGraphArrays<'a>,
        pub arrival: DeviceSlice<'a, f64>,
        pub best_edge: DeviceSlice<'a, u32>,
        pub start: DeviceSlice<'a, u32>,
        pub tree_parent: DeviceSlice<'a, u32>,
        pub tree_depth: DeviceSlice<'a, u32>,
        pub tree_credit: DeviceSlice<'a, f64>,
        pub endpoint_node: DeviceSlice<'a, u32>,
        pub endpoint_required: DeviceSlice<'a, f64>,
        pub endpoint_bound: DeviceSlice<'a, f64>,
        pub endpoint_capture: DeviceSlice<'a, u32>,
        pub endpoint_launches: DeviceSlice<'a, u32>,
        pub lca_positions: u32,
        pub lca_local_of: DeviceSlice<'a, u32>,
        pub lca_tree_nodes: DeviceSlice<'a, u32>,
        pub lca_first: DeviceSlice<'a, u32>,
        pub lca_root: DeviceSlice<'a, u32>,
        pub lca_table: DeviceSlice<'a, u64>,
    }

    /// The candidate arrays ([`crate::path_search::CandidateCells`]).
    pub struct CandidateArrays<'a> {
        pub endpoint: DeviceCells<'a, u32>,
        pub parent: DeviceCells<'a, u32>,
        pub node: DeviceCells<'a, u32>,
        pub edge: DeviceCells<'a, u32>,
        pub tail: DeviceCells<'a, u32>,
        pub pre: DeviceCells<'a, f64>,
        pub post_key: DeviceCells<'a, u64>,
    }

    /// Level 0: candidate `i` is endpoint `i`'s most critical path.
    pub struct PathsRootsArgs<'a> {
        pub search: SearchArrays<'a>,
        pub candidates: CandidateArrays<'a>,
    }

    /// Counts the kept children of candidates `first..first + counts.len()`.
    pub struct PathsCountArgs<'a> {
        pub search: SearchArrays<'a>,
        pub candidates: CandidateArrays<'a>,
        pub first: u32,
        pub threshold: f64,
        pub counts: DeviceCells<'a, u32>,
    }

    /// Writes the kept children of candidates `first..first + offsets.len()`, those of
    /// candidate `first + i` from position `base + offsets[i]` on.
    pub struct PathsExpandArgs<'a> {
        pub search: SearchArrays<'a>,
        pub candidates: CandidateArrays<'a>,
        pub first: u32,
        pub threshold: f64,
        pub offsets: DeviceSlice<'a, u32>,
        pub base: u32,
    }

    /// First pass of the prefix sum: the sum of every chunk of `counts`.
    pub struct PathsChunkSumsArgs<'a> {
        pub counts: DeviceSlice<'a, u32>,
        pub sums: DeviceCells<'a, u32>,
    }

    /// Second pass: the exclusive prefix sums of `counts`, chunk `c` from `bases[c]`.
    pub struct PathsChunkOffsetsArgs<'a> {
        pub counts: DeviceSlice<'a, u32>,
        pub bases: DeviceSlice<'a, u32>,
        pub offsets: DeviceCells<'a, u32>,
    }

    /// One radix-select pass over `keys` (digit `shift`, keys agreeing with `prefix`
    /// above it) into the zeroed `histogram`.
    pub struct PathsHistogramArgs<'a> {
        pub keys: DeviceSlice<'a, u64>,
        pub shift: u32,
        pub prefix: u64,
        pub histogram: DeviceCells<'a, u32>,
    }

    /// `flags[i] = keys[i] <= limit`.
    pub struct PathsFlagAtMostArgs<'a> {
        pub keys: DeviceSlice<'a, u64>,
        pub limit: u64,
        pub flags: DeviceCells<'a, u32>,
    }

    /// `selected[offsets[i]] = i` for every flagged `i`.
    pub struct PathsGatherArgs<'a> {
        pub flags: DeviceSlice<'a, u32>,
        pub offsets: DeviceSlice<'a, u32>,
        pub selected: DeviceCells<'a, u32>,
    }

    /// Marks each selected candidate and its ancestors in the zeroed `kept`.
    pub struct PathsMarkKeptArgs<'a> {
        pub selected: DeviceSlice<'a, u32>,
        pub parent: DeviceSlice<'a, u32>,
        pub kept: DeviceCells<'a, u32>,
    }

    /// Copies every kept candidate `i` to `offsets[i]` of the outputs.
    pub struct PathsCompactArgs<'a> {
        pub candidates: CandidateArrays<'a>,
        pub kept: DeviceSlice<'a, u32>,
        pub offsets: DeviceSlice<'a, u32>,
        pub out_endpoint: DeviceCells<'a, u32>,
        pub out_parent: DeviceCells<'a, u32>,
        pub out_node: DeviceCells<'a, u32>,
        pub out_edge: DeviceCells<'a, u32>,
        pub out_key: DeviceCells<'a, u64>,
    }

    /// `local_of[tree_nodes[i]] = i`.
    pub struct LcaLocalIndexArgs<'a> {
        pub tree_nodes: DeviceSlice<'a, u32>,
        pub local_of: DeviceCells<'a, u32>,
    }

    /// Local parents (`n + 1` values, the super-root last) and child counts (`n + 1`,
    /// zeroed).
    pub struct LcaParentArgs<'a> {
        pub tree_nodes: DeviceSlice<'a, u32>,
        pub tree_parent: DeviceSlice<'a, u32>,
        pub local_of: DeviceSlice<'a, u32>,
        pub parent: DeviceCells<'a, u32>,
        pub counts: DeviceCells<'a, u32>,
    }

    /// Puts every node in a slot of its parent's children.
    pub struct LcaPlaceArgs<'a> {
        pub parent: DeviceSlice<'a, u32>,
        pub child_start: DeviceSlice<'a, u32>,
        pub cursor: DeviceCells<'a, u32>,
        pub children: DeviceCells<'a, u32>,
        pub slot: DeviceCells<'a, u32>,
    }

    /// The successor of every arc of the walk and the initial ranks.
    pub struct LcaSuccessorArgs<'a> {
        pub parent: DeviceSlice<'a, u32>,
        pub child_start: DeviceSlice<'a, u32>,
        pub children: DeviceSlice<'a, u32>,
        pub slot: DeviceSlice<'a, u32>,
        pub next: DeviceCells<'a, u32>,
        pub rank: DeviceCells<'a, u32>,
    }

    /// One pointer-jumping step of list ranking.
    pub struct LcaRankJumpArgs<'a> {
        pub next_in: DeviceSlice<'a, u32>,
        pub rank_in: DeviceSlice<'a, u32>,
        pub next_out: DeviceCells<'a, u32>,
        pub rank_out: DeviceCells<'a, u32>,
    }

    /// The tour's keys (level 0 of the table, `2n + 1` keys) and first positions.
    pub struct LcaEnterArgs<'a> {
        pub rank: DeviceSlice<'a, u32>,
        pub parent: DeviceSlice<'a, u32>,
        pub tree_nodes: DeviceSlice<'a, u32>,
        pub tree_depth: DeviceSlice<'a, u32>,
        pub table: DeviceCells<'a, u64>,
        pub first: DeviceCells<'a, u32>,
    }

    /// Level `level >= 1` of the sparse table (`row`) from level `level - 1`.
    pub struct LcaTableLevelArgs<'a> {
        pub previous: DeviceSlice<'a, u64>,
        pub row: DeviceCells<'a, u64>,
        pub level: u32,
    }

    /// Roots, first step: `up[i]` is `i` for a root, else its parent.
    pub struct LcaRootInitArgs<'a> {
        pub parent: DeviceSlice<'a, u32>,
        pub up: DeviceCells<'a, u32>,
    }

    /// One pointer-jumping step towards the roots.
    pub struct LcaRootJumpArgs<'a> {
        pub up_in: DeviceSlice<'a, u32>,
        pub up_out: DeviceCells<'a, u32>,
    }
}

/// The dynamic shared memory a block of `threads_per_block` threads of `backward_level`
/// needs: a partial required time per thread (`[f64; 4]`), then the count and list of
/// the block's wide pins (`u32`, one slot per thread).
pub const fn backward_level_shared_bytes(threads_per_block: u32) -> u32 {
    threads_per_block * 32 + 4 + threads_per_block * 4
}

// The path search's in-edges built from the resident timing ([`crate::path_edges`]).
arguments! {
    /// The resident graph and forward values ([`crate::path_edges::TimingArrays`]).
    pub struct TimingArraysViews<'a> {
        pub nodes_per_split: u32,
        pub fanin_start: DeviceSlice<'a, u32>,
        pub fanin_arcs: DeviceSlice<'a, u32>,
        pub arcs: DeviceSlice<'a, ArcDescriptor>,
        pub arc_delay: DeviceSlice<'a, [f64; 4]>,
        pub arrival: DeviceSlice<'a, [f64; 4]>,
        pub slew: DeviceSlice<'a, [f64; 4]>,
        pub pin_flags: DeviceSlice<'a, u8>,
    }

    /// First pass: `counts[node]` is how many in-edges `node` has, a thread per node.
    pub struct PathsEdgeCountsArgs<'a> {
        pub timing: TimingArraysViews<'a>,
        pub counts: DeviceCells<'a, u32>,
    }

    /// Second pass: the in-edges of every node written from `edge_start[node]` on.
    pub struct PathsEdgeWriteArgs<'a> {
        pub timing: TimingArraysViews<'a>,
        pub edge_start: DeviceSlice<'a, u32>,
        pub edge_from: DeviceCells<'a, u32>,
        pub edge_launch: DeviceCells<'a, u32>,
        pub edge_value: DeviceCells<'a, f64>,
    }

    /// The dense clock arrays from the tree nodes' entries
    /// ([`crate::path_edges::tree_entry`]), a thread per node of `parent`.
    pub struct PathsTreeArraysArgs<'a> {
        pub tree_nodes: DeviceSlice<'a, u32>,
        pub node_parent: DeviceSlice<'a, u32>,
        pub node_depth: DeviceSlice<'a, u32>,
        pub node_credit: DeviceSlice<'a, f64>,
        pub parent: DeviceCells<'a, u32>,
        pub depth: DeviceCells<'a, u32>,
        pub credit: DeviceCells<'a, f64>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn kernel_names_are_distinct_and_arguments_are_their_structs() {
        let mut names: Vec<&str> = Kernel::ALL.iter().map(|kernel| kernel.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Kernel::ALL.len());
        for (place, kernel) in Kernel::ALL.iter().enumerate() {
            assert_eq!(*kernel as usize, place);
        }
        assert_eq!(ForwardLevelArgs::KERNEL, Kernel::ForwardLevel);
        assert_eq!(Kernel::FillF64.param_bytes(), 24);
    }

    #[test]
    fn views_narrow_flatten_and_report_what_they_touch() {
        // SAFETY: a made-up address, never dereferenced: only the arithmetic is tested.
        let quads: DeviceCells<'static, [f64; 4]> = unsafe { DeviceCells::from_raw(0x1000, 10) };
        let part = quads.slice(2..5);
        assert_eq!((part.address(), part.len()), (0x1000 + 2 * 32, 3));
        assert_eq!(part.flatten().len(), 12);
        let args = FillArgs {
            out: quads.flatten(),
            value: 0.0,
        };
        let mut seen = Vec::new();
        args.visit_arrays(&mut |array| seen.push(array));
        assert_eq!(
            seen,
            [ArrayUse {
                address: 0x1000,
                bytes: 320,
                written: true
            }]
        );
        assert!(quads.read_only().slice(0..0).is_empty());
    }

    #[test]
    #[should_panic(expected = "a view can only narrow")]
    fn a_view_cannot_grow() {
        // SAFETY: as above, never dereferenced.
        let view: DeviceSlice<'static, u32> = unsafe { DeviceSlice::from_raw(0x1000, 4) };
        let _ = view.slice(2..5);
    }
}
