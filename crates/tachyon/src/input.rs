//! Reading input files: plain text or gzip-compressed (`.gz`, found by the gzip magic
//! bytes, so a compressed file needs no particular name), always UTF-8.

use std::io::Read;
use std::path::Path;

/// The gzip magic bytes.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Files at least this large are read by all threads, [`READ_PIECE`] bytes each time.
const PARALLEL_READ_MIN: u64 = 32 << 20;

/// The bytes one thread reads at a time from a large file.
const READ_PIECE: usize = 4 << 20;

/// Reads `path` as text, decompressing it first when it is gzip data.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    let started = std::time::Instant::now();
    let bytes = read_bytes(path)?;
    let (n_bytes, read) = (bytes.len(), started.elapsed());
    let text = decode(bytes)?;
    if n_bytes as u64 >= PARALLEL_READ_MIN {
        tracing::debug!(
            file = %path.display(),
            read_ms = read.as_secs_f64() * 1e3,
            decoded_ms = (started.elapsed() - read).as_secs_f64() * 1e3,
            "large file read, then decoded (decompressed, checked as UTF-8)"
        );
    }
    Ok(text)
}

/// Reads the whole file. A large one is read in pieces at their offsets by every
/// thread: the kernel's copy into the buffer, and the first touch of the buffer's
/// fresh pages, then run on every core instead of one (a 337 MB SPEF is a few hundred
/// ms of one core's time). A file that changes size meanwhile is read again in one go.
fn read_bytes(path: &Path) -> std::io::Result<Vec<u8>> {
    #[cfg(unix)]
    {
        use rayon::prelude::*;
        use std::os::unix::fs::FileExt;
        let file = std::fs::File::open(path)?;
        let metadata = file.metadata()?;
        if metadata.is_file() && metadata.len() >= PARALLEL_READ_MIN {
            let size = usize::try_from(metadata.len())
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
            let mut bytes = vec![0u8; size];
            let read =
                bytes
                    .par_chunks_mut(READ_PIECE)
                    .enumerate()
                    .try_for_each(|(index, piece)| {
                        file.read_exact_at(piece, (index * READ_PIECE) as u64)
                    });
            let mut past_end = [0u8; 1];
            if read.is_ok() && file.read_at(&mut past_end, size as u64)? == 0 {
                return Ok(bytes);
            }
        }
    }
    std::fs::read(path)
}

/// Turns a file's bytes into text: gzip data is decompressed (every member of a
/// multi-member file), then the bytes must be UTF-8.
pub fn decode(bytes: Vec<u8>) -> std::io::Result<String> {
    let bytes = if bytes.starts_with(&GZIP_MAGIC) {
        let mut text = Vec::with_capacity(bytes.len() * 4);
        flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut text)?;
        text
    } else {
        bytes
    };
    String::from_utf8(bytes).map_err(|error| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "the file is not UTF-8 text (invalid byte at offset {})",
                error.utf8_error().valid_up_to()
            ),
        )
    })
}

/// The file's name without a final `.gz` (`lib.v.gz` gives `lib.v`), for telling its
/// format by extension.
pub fn uncompressed_name(path: &Path) -> &Path {
    match path.extension() {
        Some(extension) if extension == "gz" => path.file_stem().map_or(path, Path::new),
        _ => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_files_read_in_pieces_equal_their_bytes() {
        let folder = std::env::temp_dir().join(format!("tachyon-read-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join("large.txt");
        // Not a multiple of the piece size, so the last piece is short.
        let size = PARALLEL_READ_MIN as usize + READ_PIECE / 2 + 17;
        let text: String = (0..size)
            .map(|at| char::from(b'a' + (at % 23) as u8))
            .collect();
        std::fs::write(&path, &text).unwrap();
        assert_eq!(read_text(&path).unwrap(), text);
        std::fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn gzip_data_is_decompressed_and_text_passes_through() {
        use std::io::Write;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(b"library (x) { }").unwrap();
        let compressed = encoder.finish().unwrap();
        assert_eq!(decode(compressed).unwrap(), "library (x) { }");
        assert_eq!(
            decode(b"module m; endmodule".to_vec()).unwrap(),
            "module m; endmodule"
        );
        let error = decode(vec![b'a', 0xff]).unwrap_err();
        assert!(error.to_string().contains("offset 1"), "{error}");
        assert_eq!(
            uncompressed_name(Path::new("d/a.lib.gz")),
            Path::new("a.lib")
        );
        assert_eq!(
            uncompressed_name(Path::new("d/a.lib")),
            Path::new("d/a.lib")
        );
    }
}
