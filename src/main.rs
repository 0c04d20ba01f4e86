//! The `emcf-gateway` binary: see `emcf_gateway::cli`.

use std::process::ExitCode;

fn main() -> ExitCode {
    private_files();
    match emcf_gateway::cli::main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // In the CLI's language: what failed, why, and a foreign text only as a detail.
            let (text, status) = emcf_gateway::cli::describe_error(&error);
            eprintln!("{text}");
            ExitCode::from(status)
        }
    }
}

/// Every file and directory this process creates is its user's only, whatever umask it was
/// started with (a shell's 022 would leave the register readable by every local user): sled
/// and the bundled simulator create files of their own, so the umask is the one place that
/// covers them all. The store also creates its own files with explicit modes.
fn private_files() {
    #[cfg(unix)]
    // SAFETY: umask(2) only sets the process's file mode creation mask and cannot fail; no
    // other thread exists yet.
    unsafe {
        libc::umask(0o077);
    }
}
