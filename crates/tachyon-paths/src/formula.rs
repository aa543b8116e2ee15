//! The per-path formulas of the search, as plain functions of `f64` values.
//!
//! They live in `tachyon-kernels` (`path_search`), free of `std`, because the GPU search
//! runs the same formulas; this module re-exports them.
//!
//! Every quantity is expressed as an "effective arrival": the arrival time of a path
//! prefix with its CPPR credit folded in, so that one number per (pin, transition)
//! ranks all prefixes. For the late split (setup, max) a larger effective arrival is
//! worse; for the early split (hold, min) a smaller one is.

pub use tachyon_kernels::path_search::{
    deviation_cost, endpoint_slack, is_more_critical, launch_effective_arrival,
};
