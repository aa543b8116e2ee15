//! GPU entry points (`extern "ptx-kernel"`), compiled only for nvptx64.
