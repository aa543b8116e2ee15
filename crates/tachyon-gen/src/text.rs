//! A buffered text file writer with fast integer and fixed-point formatting.
//!
//! `write!` with `{}` is too slow for hundreds of megabytes of SPEF, so numbers are
//! formatted by hand into a byte buffer that is flushed to the file in large chunks.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::GenError;

/// How many bytes collect in memory before they go to the file.
const FLUSH_THRESHOLD: usize = 1 << 18;

/// A file being written, with its pending bytes.
pub(crate) struct TextFile {
    file: File,
    path: PathBuf,
    buffer: Vec<u8>,
    bytes_written: u64,
}

impl TextFile {
    /// Creates (or truncates) the file at `path`.
    pub(crate) fn create(path: &Path) -> Result<TextFile, GenError> {
        let file = File::create(path).map_err(|source| GenError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(TextFile {
            file,
            path: path.to_path_buf(),
            buffer: Vec::with_capacity(FLUSH_THRESHOLD + 4096),
            bytes_written: 0,
        })
    }

    /// Appends raw text.
    pub(crate) fn text(&mut self, text: &str) {
        self.buffer.extend_from_slice(text.as_bytes());
    }

    /// Appends raw bytes.
    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// Appends a prefix followed by a decimal index, e.g. `n42`.
    pub(crate) fn name(&mut self, prefix: &str, index: u64) {
        self.buffer.extend_from_slice(prefix.as_bytes());
        push_integer(&mut self.buffer, index);
    }

    /// Writes the pending bytes to the file once enough have collected.
    pub(crate) fn flush_if_full(&mut self) -> Result<(), GenError> {
        if self.buffer.len() >= FLUSH_THRESHOLD {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes everything pending, closes the file and returns its size in bytes.
    pub(crate) fn finish(mut self) -> Result<u64, GenError> {
        self.flush()?;
        self.file.flush().map_err(|source| GenError::Io {
            path: self.path.clone(),
            source,
        })?;
        Ok(self.bytes_written)
    }

    fn flush(&mut self) -> Result<(), GenError> {
        self.file
            .write_all(&self.buffer)
            .map_err(|source| GenError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.bytes_written += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }
}

/// Appends `value` in decimal to `buffer`.
pub(crate) fn push_integer(buffer: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    buffer.extend_from_slice(&digits[start..]);
}

/// Appends `value / 10^4` with four decimals to `buffer`.
pub(crate) fn push_fixed4(buffer: &mut Vec<u8>, value: u64) {
    push_integer(buffer, value / 10_000);
    let fraction = value % 10_000;
    buffer.extend_from_slice(&[
        b'.',
        b'0' + (fraction / 1000) as u8,
        b'0' + (fraction / 100 % 10) as u8,
        b'0' + (fraction / 10 % 10) as u8,
        b'0' + (fraction % 10) as u8,
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_integers_and_fixed_point() {
        let mut buffer = Vec::new();
        push_integer(&mut buffer, 0);
        buffer.push(b' ');
        push_integer(&mut buffer, 1_234_567);
        buffer.push(b' ');
        push_fixed4(&mut buffer, 12);
        buffer.push(b' ');
        push_fixed4(&mut buffer, 123_456);
        assert_eq!(buffer, b"0 1234567 0.0012 12.3456");
    }
}
