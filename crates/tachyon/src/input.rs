//! Reading input files: plain text or gzip-compressed (`.gz`, found by the gzip magic
//! bytes, so a compressed file needs no particular name), always UTF-8.

use std::io::Read;
use std::path::Path;

/// The gzip magic bytes.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads `path` as text, decompressing it first when it is gzip data.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    decode(std::fs::read(path)?)
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
