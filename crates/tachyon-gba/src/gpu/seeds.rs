//! The backward seeds computed on the device: the [`SeedLayout`] of the graph uploaded
//! once, then per update the tests' results (48 bytes a test) go up and the
//! `required_seeds` kernel writes every seeded pin's seeds from them and the arrivals
//! already there ([`tachyon_kernels::seeds::seed_pin`], the function
//! [`super::twin::required_seeds`] runs on the CPU). The host list
//! ([`crate::required_seed_list`]) it replaces cost a pass over every pin and fresh
//! memory for them on every update (8-10 ms at 1M gates, 60-80 ms at 5M on the H100).

use tachyon_gpu::check::{check_indices, check_length, check_starts};
use tachyon_gpu::{DeviceBuffer, GpuContext, GpuError, LayoutError};
use tachyon_kernels::seeds::{TestSeedInputs, FLAG_BITS};

use crate::backward::SeedLayout;

/// A [`SeedLayout`] on the device.
pub struct DeviceSeeds {
    pub(super) pins: DeviceBuffer<u32>,
    pub(super) initial: DeviceBuffer<[f64; 4]>,
    pub(super) term_start: DeviceBuffer<u32>,
    pub(super) terms: DeviceBuffer<u32>,
    pub(super) n_pins: usize,
    pub(super) n_tests: usize,
}

impl DeviceSeeds {
    /// Checks `layout` against a graph of `n_pins` pins and `n_tests` tests and uploads
    /// it.
    pub fn upload(
        gpu: &GpuContext,
        layout: &SeedLayout,
        n_pins: usize,
        n_tests: usize,
    ) -> Result<DeviceSeeds, GpuError> {
        const DURING: &str = "uploading the seed layout";
        let n_seeded = layout.pins.len();
        check_indices("seeded pins", &layout.pins, n_pins)?;
        // One writer per seed: no pin twice.
        if layout.pins.windows(2).any(|pair| pair[0] >= pair[1]) {
            return Err(LayoutError::BadStarts {
                array: "seeded pins (not ascending)",
                end: n_pins,
            }
            .into());
        }
        check_length("seeds' assertions", n_seeded, layout.initial.len())?;
        check_length("seeds' term starts", n_seeded + 1, layout.term_start.len())?;
        check_starts("seeds' term starts", &layout.term_start, layout.terms.len())?;
        let tests: Vec<u32> = layout.terms.iter().map(|term| term >> FLAG_BITS).collect();
        check_indices("seeds' tests", &tests, n_tests)?;
        Ok(DeviceSeeds {
            pins: gpu.upload(DURING, &layout.pins)?,
            initial: gpu.upload(DURING, &layout.initial)?,
            term_start: gpu.upload(DURING, &layout.term_start)?,
            terms: gpu.upload(DURING, &layout.terms)?,
            n_pins,
            n_tests,
        })
    }

    /// Seeded pins.
    pub fn len(&self) -> usize {
        self.pins.len()
    }

    /// Whether no pin is seeded.
    pub fn is_empty(&self) -> bool {
        self.pins.is_empty()
    }

    /// Checks that `tests` are the results of this layout's tests.
    pub(super) fn check_tests(&self, tests: &[TestSeedInputs]) -> Result<(), GpuError> {
        Ok(check_length(
            "tests' seed inputs",
            self.n_tests,
            tests.len(),
        )?)
    }
}
