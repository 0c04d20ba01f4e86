//! What /proc says about a process, and this process's file limit.

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`...), in bytes.
pub fn status_bytes(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// Resident set size now.
pub fn rss(pid: u32) -> Option<u64> {
    status_bytes(pid, "VmRSS")
}

/// Peak resident set size since the process started.
pub fn peak_rss(pid: u32) -> Option<u64> {
    status_bytes(pid, "VmHWM")
}

/// Raises this process's open-file soft limit to the hard limit; returns the new soft limit.
pub fn raise_nofile() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid pointer to a properly sized struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 0;
        }
        limit.rlim_cur = limit.rlim_max;
        if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
            let _ = libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        }
    }
    limit.rlim_cur
}

/// Mebibytes.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// CPU time (user + system, all threads) a process has used so far, in seconds.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let fields = stat_fields(pid)?;
    Some((field(&fields, 11)? + field(&fields, 12)?) / ticks_per_second())
}

/// CPU time of a process and its children so far, in seconds: its own, that of its children
/// that have exited and been waited for, and that of its live children (one level down:
/// PostgreSQL's backends are the postmaster's children).
pub fn tree_cpu_seconds(pid: u32) -> Option<f64> {
    let fields = stat_fields(pid)?;
    let own: f64 = (11..=14).filter_map(|i| field(&fields, i)).sum();
    let mut ticks = own;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(fields) = stat_fields(child) {
            if field(&fields, 1) == Some(f64::from(pid)) {
                ticks += field(&fields, 11).unwrap_or(0.0) + field(&fields, 12).unwrap_or(0.0);
            }
        }
    }
    Some(ticks / ticks_per_second())
}

/// The whole machine's CPU time so far, in seconds summed over its CPUs: (busy, all), busy
/// being everything but idle and I/O wait (`/proc/stat`).
pub fn machine_cpu_seconds() -> Option<(f64, f64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let values: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    let all: f64 = values.iter().take(8).sum();
    let idle = values.get(3)? + values.get(4)?;
    let ticks = ticks_per_second();
    Some(((all - idle) / ticks, all / ticks))
}

/// The fields of `/proc/<pid>/stat` after the command name (`state` is field 0, `ppid` 1,
/// `utime` 11, `stime` 12, `cutime` 13, `cstime` 14).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: count the fields after it.
    Some(
        stat[stat.rfind(')')? + 1..]
            .split_whitespace()
            .map(str::to_owned)
            .collect(),
    )
}

fn field(fields: &[String], i: usize) -> Option<f64> {
    fields.get(i)?.parse().ok()
}

/// Clock ticks per second of `/proc`'s times.
fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}
