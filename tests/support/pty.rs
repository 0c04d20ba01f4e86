//! The simulators' ptys as a real serial port behaves after its user died. The gateway opens
//! its port exclusively (TIOCEXCL); a real port loses that mode when the killed gateway's
//! handle closes, but a simulator keeps a handle on its pty's slave (`emcf_sim::port::Pty`),
//! so the mode stays, and a gateway started again on it by a normal user gets EBUSY (root
//! passes over it). Included with `#[path]` by `tests/common` and `tests/crash_oracle`.

/// Clears the exclusive mode of every pty this test process holds open (the simulators'), as
/// the death of the gateway holding it would on a real port: called before a gateway or the
/// CLI starts.
pub fn release_exclusive_mode() {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    for entry in entries.flatten() {
        let is_pty = std::fs::read_link(entry.path())
            .is_ok_and(|target| target.starts_with("/dev/pts/") || target == *"/dev/ptmx");
        let fd = entry.file_name().to_string_lossy().parse::<libc::c_int>();
        if let (true, Ok(fd)) = (is_pty, fd) {
            // SAFETY: TIOCNXCL takes no argument and only clears a terminal's exclusive mode;
            // on a descriptor closed meanwhile (or reused by something else) it fails harmlessly.
            unsafe {
                libc::ioctl(fd, libc::TIOCNXCL);
            }
        }
    }
}
