//! Peak resident memory and CPU time of this process, for benchmark reports.

/// The peak resident set size in bytes (`VmHWM` from `/proc/self/status`), or `None`
/// where the platform does not say.
pub fn peak_resident_bytes() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// The resident set size in bytes now (`VmRSS`).
pub fn resident_bytes() -> Option<u64> {
    status_bytes("VmRSS:")
}

/// Starts the peak resident set size afresh from the current size (Linux: `5` into
/// `/proc/self/clear_refs`), so that [`peak_resident_bytes`] then tells the peak of
/// what follows; false where that cannot be done.
pub fn reset_peak_resident() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    let kilobytes: u64 = line
        .trim_start_matches(field)
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kilobytes * 1024)
}

/// The user and system CPU time of this process so far, in seconds (`utime` and
/// `stime` of `/proc/self/stat`, in the kernel's fixed 100 ticks per second), or
/// `None` where the platform does not say. System time is mostly page faults on fresh
/// memory: on a VM that hands freed memory back to its host, it is what makes one
/// binary's runs differ.
pub fn cpu_seconds() -> Option<(f64, f64)> {
    cpu_seconds_of(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// [`cpu_seconds`] from the text of a `/proc/<pid>/stat`.
fn cpu_seconds_of(stat: &str) -> Option<(f64, f64)> {
    const TICKS_PER_SECOND: f64 = 100.0;
    // The command name (field 2) is in parentheses and may hold spaces and
    // parentheses: count fields from after its last `)`, where field 3 (the state)
    // comes first.
    let (_, after_name) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |field: usize| fields.get(field - 3)?.parse::<u64>().ok();
    Some((
        ticks(14)? as f64 / TICKS_PER_SECOND,
        ticks(15)? as f64 / TICKS_PER_SECOND,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_fields_are_counted_after_the_command_name() {
        let stat = "4242 (odd (name) x) R 1 2 3 4 5 6 7 8 9 10 250 30 0 0 20 0 1 0";
        assert_eq!(cpu_seconds_of(stat), Some((2.5, 0.3)));
        assert_eq!(cpu_seconds_of("4242 (cut) R 1 2"), None);
    }

    #[test]
    fn cpu_time_is_read_where_linux_says_it() {
        if !cfg!(target_os = "linux") {
            return;
        }
        // Work until the kernel has counted some CPU time (it counts in 10 ms ticks).
        let started = std::time::Instant::now();
        let mut work = 0u64;
        loop {
            let (user, system) = cpu_seconds().expect("linux has /proc/self/stat");
            assert!(user >= 0.0 && system >= 0.0);
            if user + system > 0.0 {
                break;
            }
            assert!(started.elapsed().as_secs() < 10, "no CPU time after 10 s");
            for step in 0..1_000_000u64 {
                work = std::hint::black_box(work.wrapping_mul(31).wrapping_add(step));
            }
        }
    }
}
