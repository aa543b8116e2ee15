//! Correctly rounded primitives that `core` does not provide on every target.

/// IEEE-754 square root, correctly rounded on the host and on the GPU (`sqrt.rn.f64`).
#[inline]
pub fn sqrt(value: f64) -> f64 {
    #[cfg(not(target_arch = "nvptx64"))]
    {
        std::primitive::f64::sqrt(value)
    }
    #[cfg(target_arch = "nvptx64")]
    {
        // The intrinsic lowers to llvm.sqrt.f64, which NVPTX emits as sqrt.rn.f64.
        core::intrinsics::sqrtf64(value)
    }
}
