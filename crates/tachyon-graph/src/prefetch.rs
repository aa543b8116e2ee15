//! A hint that an element will be read soon, for loops whose reads jump around arrays
//! much larger than the caches (a pin's fan-in values, a network entry's sources):
//! issued a few items ahead, the cache misses of several items overlap instead of being
//! waited for one after the other. On the 1M-gate generated design (2 threads) it took
//! the CPU backend's propagation from about 900 to 600 ms.

/// Asks the CPU to bring `values[index]` into the cache. No effect when `index` is out
/// of range or the target has no prefetch instruction; never changes a result.
#[inline(always)]
pub fn prefetch<T>(values: &[T], index: usize) {
    if let Some(value) = values.get(index) {
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let address = (value as *const T).cast::<i8>();
            // The one `unsafe` outside `tachyon-gpu` and the kernel entry points.
            // SAFETY: `_mm_prefetch` only needs SSE, which every x86_64 target has (it
            // is `unsafe` to call because it is declared with `#[target_feature]`), and
            // a prefetch never faults or writes, whatever the address; this one points
            // into `values` anyway.
            #[allow(unsafe_code)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(address)
            };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = value;
    }
}
