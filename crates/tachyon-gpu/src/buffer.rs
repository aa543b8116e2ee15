//! Device buffers: typed arrays of plain data in a GPU's memory, and the views of them
//! that kernel arguments hold.

use std::fmt;
use std::marker::PhantomData;

use cudarc::driver::{CudaSlice, DevicePtr};
use tachyon_kernels::launch::{DeviceCells, DeviceCopy, DeviceSlice};

use crate::context::Streams;
use crate::streams::Locked;

/// `len` values of `T` in device memory, allocated from the device's pool on the
/// context's stream and freed there when dropped (after the work queued before), on
/// whichever thread drops it.
pub struct DeviceBuffer<T: DeviceCopy> {
    /// The allocation, freed when the buffer is dropped; at least one byte: the driver
    /// rejects empty allocations. `None` only inside `drop`.
    allocation: Option<CudaSlice<u8>>,
    /// The lock of the stream the allocation is freed on: a free queued while another
    /// thread captures that stream would become part of its graph.
    streams: Locked<Streams>,
    pub(crate) address: u64,
    len: usize,
    _values: PhantomData<T>,
}

impl<T: DeviceCopy> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "DeviceBuffer<{}>[{}]",
            std::any::type_name::<T>(),
            self.len
        )
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        let _held = self.streams.hold();
        // Queues the free on the stream, behind the work that uses the buffer.
        drop(self.allocation.take());
    }
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Wraps `memory` (at least `len` values' bytes, allocated on the stream `streams`
    /// locks) as a buffer of `len` values.
    pub(crate) fn new(
        memory: CudaSlice<u8>,
        len: usize,
        streams: Locked<Streams>,
    ) -> DeviceBuffer<T> {
        debug_assert!(memory.len() >= len * std::mem::size_of::<T>());
        // With event tracking off (see `GpuContext::open`) the guard records nothing.
        let address = memory.device_ptr(memory.stream()).0;
        DeviceBuffer {
            allocation: Some(memory),
            streams,
            address,
            len,
            _values: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The buffer as an array a launch reads.
    pub fn view(&self) -> DeviceSlice<'_, T> {
        // SAFETY: `address` starts this buffer's `len` values, which live while `self`
        // is borrowed (and, freed in stream order, until the work queued before is done).
        unsafe { DeviceSlice::from_raw(self.address, self.len) }
    }

    /// The buffer as an array a launch writes.
    pub fn cells(&self) -> DeviceCells<'_, T> {
        // SAFETY: as for `view`. A writable view of a shared borrow is sound: the host
        // never touches device memory through references, and the launch checks that no
        // other array of the same launch overlaps a written one.
        unsafe { DeviceCells::from_raw(self.address, self.len) }
    }

    /// Bytes of `count` values.
    pub(crate) fn bytes_of(count: usize) -> usize {
        count * std::mem::size_of::<T>()
    }
}
