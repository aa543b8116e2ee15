//! The timing math of Tachyon, shared by the CPU engines (host build) and the GPU
//! kernels (the same source compiled to PTX for `nvptx64-nvidia-cuda`).
//!
//! Every formula lives here exactly once. The CPU backend and the GPU entry points call
//! these functions in the same order, and IEEE `+ - * / sqrt` are correctly rounded on
//! both, so both give bit-identical results. Never enable fast math or FMA contraction
//! (`cargo xtask ptx` rejects PTX that contains `fma`).
//!
//! Conventions: times in ps, capacitances in fF, resistances in kOhm (kOhm x fF = ps),
//! all `f64`. Arrays describing an RC tree are in BFS order: index 0 is the root (the
//! driver) and `parent[v] < v` for every other node.

#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        stdarch_nvptx,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod changes;
pub mod condition;
pub mod cppr;
pub mod delay;
pub mod launch;
pub mod levelize;
pub mod lut;
pub mod math;
pub mod path_edges;
pub mod path_search;
pub mod propagate;
pub mod rc;
pub mod rc_flatten;
pub mod seeds;

#[cfg(target_arch = "nvptx64")]
mod ptx_entry;
#[cfg(target_arch = "nvptx64")]
mod ptx_paths;

pub use condition::{Split, Transition, CONDITIONS, N_CONDITIONS};
