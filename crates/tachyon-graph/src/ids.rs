//! Typed `u32` ids over the graph's arenas.

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
typed_id!(
    /// An NLDM table in the table store shared by the graph and the libraries.
    TableId
);
