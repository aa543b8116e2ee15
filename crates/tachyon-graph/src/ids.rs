//! Typed `u32` ids over the graph's arenas.

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// A plain `u32` in memory (`repr(transparent)`, checked by zerocopy's derives),
        /// so that a list of ids can be read as a list of `u32` without a copy
        /// ([`crate::Csr::arc_indices`]).
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            Hash,
            PartialOrd,
            Ord,
            zerocopy::FromBytes,
            zerocopy::IntoBytes,
            zerocopy::Immutable,
            zerocopy::KnownLayout,
        )]
        #[repr(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The arena index of this id.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }

            /// The id of arena index `index` (arenas never exceed `u32::MAX` entries).
            #[inline]
            pub fn from_index(index: usize) -> Self {
                Self(index as u32)
            }
        }
    };
}

typed_id!(
    /// A pin: a primary input or output port, or an instance pin `inst:pin`.
    PinId
);
typed_id!(
    /// A net.
    NetId
);
typed_id!(
    /// A propagation arc (net arc or cell arc).
    ArcId
);
typed_id!(
    /// A timing test (setup or hold check, CK -> D).
    TestId
);
/// An NLDM table in the table store shared by the graph and the libraries. Kept as
/// its index plus one, so that `Option<TableId>` takes 4 bytes: a cell arc names four
/// optional tables, and a million-gate graph has about six million arcs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableId(std::num::NonZeroU32);

impl TableId {
    /// The store index of this table.
    #[inline]
    pub fn index(self) -> usize {
        self.0.get() as usize - 1
    }

    /// The id of store index `index` (stores never reach `u32::MAX` tables).
    #[inline]
    pub fn from_index(index: usize) -> Self {
        let stored = u32::try_from(index + 1)
            .ok()
            .and_then(std::num::NonZeroU32::new);
        Self(stored.expect("fewer than u32::MAX tables"))
    }
}
