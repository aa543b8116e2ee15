//! Memory estimates checked before the large allocations, so that a design too large for
//! the machine fails with the phase, the size needed and the limit, instead of the
//! allocator's "memory allocation of N bytes failed" abort (or the kernel's OOM kill).
//!
//! The limit is the one the program set ([`set_memory_limit`]; the binary passes
//! `TACHYON_MEMORY_LIMIT`, bytes with an optional `k`, `m`, `g` or `t` suffix, read by
//! [`parse_size`]) when set, else the smallest of the system's available memory
//! (`MemAvailable`), the cgroup's memory limit less its usage, and the address-space
//! limit (`ulimit -v`) less the process's address space. The estimates are per pin, arc, net and RC node; on a
//! generated 200k-gate design (610k pins, 1.5M arcs, 1.7M RC nodes) they give 422 MB
//! for a timing update that raised the peak resident memory from 393 MB (loading) to
//! 634 MB: they err on the large side, but not by a factor.

use tachyon_link::DesignSize;

use crate::TimerError;

/// Bytes the timing graph (pins, arcs, nets, RC arena, adjacency, levels) takes, per
/// pin, arc, net and RC node.
const GRAPH_BYTES: [u64; 4] = [112, 34, 84, 20];

/// Bytes the timing values and the engines' working arrays (flat layout, CPPR network)
/// take, per pin, arc, net and RC node.
const TIMING_BYTES: [u64; 4] = [224, 50, 28, 20];

/// Bytes per input byte of a file while it is read and parsed: the text itself and the
/// model its parser builds (SPEF and Verilog models are the largest per byte).
const PARSE_BYTES_PER_BYTE: u64 = 4;

fn bytes(size: &DesignSize, per: [u64; 4]) -> u64 {
    size.pins * per[0] + size.arcs * per[1] + size.nets * per[2] + size.rc_nodes * per[3]
}

/// What a timing update of a design of `size` needs: the graph, then the timing data
/// beside it.
pub(crate) fn update_bytes(size: &DesignSize) -> u64 {
    bytes(size, GRAPH_BYTES) + bytes(size, TIMING_BYTES)
}

/// What reading and parsing a file of `file_bytes` needs.
pub(crate) fn parse_bytes(file_bytes: u64) -> u64 {
    file_bytes.saturating_mul(PARSE_BYTES_PER_BYTE)
}

/// Fails when `needed` bytes for `what` in `phase` exceed the memory limit.
pub(crate) fn check(phase: &'static str, what: String, needed: u64) -> Result<(), TimerError> {
    match limit() {
        Some((limit, source)) if needed > limit => Err(TimerError::OutOfMemory {
            phase,
            what,
            needed,
            limit,
            limit_source: source,
        }),
        _ => Ok(()),
    }
}

/// The limit the program set, with what set it (for messages).
static SET_LIMIT: std::sync::RwLock<Option<(u64, &'static str)>> = std::sync::RwLock::new(None);

/// Sets the memory limit of every timer in the process: `bytes`, named `source` in
/// errors (the binary passes `TACHYON_MEMORY_LIMIT`), in place of the system's limits;
/// None goes back to those. A library reads no environment variable: the program
/// decides.
pub fn set_memory_limit(limit: Option<(u64, &'static str)>) {
    *SET_LIMIT
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = limit;
}

/// The memory limit that applies, in bytes, and what sets it.
pub(crate) fn limit() -> Option<(u64, &'static str)> {
    if let Some(set) = *SET_LIMIT
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
    {
        return Some(set);
    }
    let mut best: Option<(u64, &'static str)> = None;
    let mut consider = |limit: Option<u64>, source: &'static str| {
        if let Some(limit) = limit {
            if best.is_none_or(|(smallest, _)| limit < smallest) {
                best = Some((limit, source));
            }
        }
    };
    consider(mem_available(), "the system's available memory");
    consider(cgroup_room(), "the cgroup's memory limit");
    consider(address_space_room(), "the address-space limit (ulimit -v)");
    best
}

/// A size such as `1500000`, `512m` or `8g` (powers of 1024).
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim().to_ascii_lowercase();
    let (digits, shift) = match text.as_bytes().last()? {
        b'k' => (&text[..text.len() - 1], 10),
        b'm' => (&text[..text.len() - 1], 20),
        b'g' => (&text[..text.len() - 1], 30),
        b't' => (&text[..text.len() - 1], 40),
        _ => (text.as_str(), 0),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// Formats bytes for messages: `3.2 GB`, `512.0 MB`.
pub(crate) fn human(bytes: u64) -> String {
    let bytes = bytes as f64;
    if bytes >= 1e9 {
        format!("{:.1} GB", bytes / 1e9)
    } else if bytes >= 1e6 {
        format!("{:.1} MB", bytes / 1e6)
    } else {
        format!("{:.1} kB", bytes / 1e3)
    }
}

/// `key:   12345 kB` from a `/proc` file, in bytes.
fn proc_kilobytes(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|line| line.starts_with(key))?;
    let value = line[key.len()..].trim().trim_end_matches("kB").trim();
    value.parse::<u64>().ok()?.checked_mul(1024)
}

fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    proc_kilobytes(&text, "MemAvailable:")
}

/// cgroup v2: `memory.max` less `memory.current` (None where unlimited or absent).
fn cgroup_room() -> Option<u64> {
    let max = std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok()?;
    let max = max.trim().parse::<u64>().ok()?;
    let current = std::fs::read_to_string("/sys/fs/cgroup/memory.current")
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok())
        .unwrap_or(0);
    Some(max.saturating_sub(current))
}

/// `ulimit -v` less the address space the process has (None where unlimited).
fn address_space_room() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max address space"))?;
    let soft = line.split_whitespace().nth(3)?;
    let limit = soft.parse::<u64>().ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used = proc_kilobytes(&status, "VmSize:").unwrap_or(0);
    Some(limit.saturating_sub(used))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("1500"), Some(1500));
        assert_eq!(parse_size("512m"), Some(512 << 20));
        assert_eq!(parse_size(" 8G "), Some(8 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("99999999999999t"), None);
        assert_eq!(human(3_200_000_000), "3.2 GB");
        assert_eq!(human(512_000_000), "512.0 MB");
    }

    #[test]
    fn proc_values_are_read_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemAvailable:   12000000 kB\n";
        assert_eq!(
            proc_kilobytes(text, "MemAvailable:"),
            Some(12_000_000 * 1024)
        );
        assert_eq!(proc_kilobytes(text, "Nope:"), None);
    }
}
