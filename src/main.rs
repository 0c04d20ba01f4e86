//! The `emcf-gateway` binary: see `emcf_gateway::cli`.

use std::process::ExitCode;

fn main() -> ExitCode {
    match emcf_gateway::cli::main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
