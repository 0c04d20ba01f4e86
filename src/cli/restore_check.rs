//! What `emcf-gateway restore` checks of a register behind its box before it returns
//! (docs/design.md, "A register behind its box"). It prints the restored register's last
//! counters per NIM. Then it reads each configured box on its port, as `device probe` does
//! with the service stopped: `restore` refuses to run beside a running service, so no one
//! holds the port. A box ahead of the restored register (numbers it holds neither as entries
//! nor as open intents) is named with its missing numbers; a box that cannot be read is said
//! so. A web API e-MCF gives its counters only in a confirmation, so it is not read here.
//! Either way the service checks every box again when it starts (`certify/register_behind.rs`)
//! and stops one that is ahead: this check only tells the operator sooner. It changes nothing:
//! the index it builds to read the register is removed again.

use std::path::Path;

use crate::config::Config;
use crate::i18n::Lang;
use crate::model::{missing_numbers, numbers_text, BoxCounters};
use crate::msg;
use crate::store::{Store, StoreOptions};

/// At most this many missing numbers are printed per box.
const MAX_PRINTED: usize = 1_000;

/// Prints the restored register's counters, and how each configured box compares (see the
/// module's doc). Everything on stderr, as `restore` says everything; never fails the restore.
pub(super) fn check(config: &Config, state_dir: &Path, lang: Lang) {
    // `restore` leaves no index (the service rebuilds it at start): the one this reading
    // builds is removed again, so that the state directory is as `restore` left it.
    let index = state_dir.join("index.sled");
    let had_index = index.exists();
    let read = Store::open_with(state_dir, &StoreOptions::default()).and_then(|store| {
        let counters = store.all_box_counters()?;
        let open = store.open_intents()?;
        Ok((counters, open))
    });
    if !had_index {
        if let Err(error) = std::fs::remove_dir_all(&index) {
            tracing::debug!(%error, "the index built to read the restored counters stays");
        }
    }
    let (counters, open) = match read {
        Ok(read) => read,
        Err(error) => {
            let line = msg!("cli-restore-counters-unread", why = error.to_string());
            eprintln!("{}", line.render(lang));
            return;
        }
    };
    print_counters(&counters, lang);
    let boxes: Vec<_> = config
        .devices
        .iter()
        .filter(|entry| entry.kind.is_box())
        .collect();
    if !boxes.is_empty() {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(_) => return,
        };
        for entry in boxes {
            let report = runtime.block_on(super::device_commands::probe_on_port(entry, None, lang));
            let said = match report {
                Ok(report) => report.nim.zip(report.counters.map(|(tc, _, _)| tc)),
                Err(error) => {
                    let line = msg!(
                        "cli-restore-box-unread",
                        device = entry.name.as_str(),
                        why = format!("{error:#}")
                    );
                    eprintln!("{}", line.render(lang));
                    continue;
                }
            };
            let Some((nim, tc)) = said else {
                let line = msg!(
                    "cli-restore-box-unread",
                    device = entry.name.as_str(),
                    why = "C1h"
                );
                eprintln!("{}", line.render(lang));
                continue;
            };
            let intents: Vec<Option<u64>> = open
                .iter()
                .filter(|(_, intent)| intent.device == entry.name)
                .map(|(_, intent)| intent.device_tc)
                .collect();
            let line = match counters.iter().find(|known| known.nim == nim) {
                None => msg!(
                    "cli-restore-box-first-use",
                    device = entry.name.as_str(),
                    nim = nim.as_str(),
                    tc = tc
                ),
                Some(known) => {
                    let missing = missing_numbers(known.highest(), tc, &intents, &[], MAX_PRINTED);
                    if missing.is_empty() {
                        msg!(
                            "cli-restore-box-follows",
                            device = entry.name.as_str(),
                            nim = nim.as_str(),
                            tc = tc
                        )
                    } else {
                        msg!(
                            "cli-restore-box-ahead",
                            device = entry.name.as_str(),
                            nim = nim.as_str(),
                            tc = tc,
                            known = known.highest(),
                            missing = numbers_text(&missing)
                        )
                    }
                }
            };
            eprintln!("{}", line.render(lang));
        }
    }
    eprintln!("{}", msg!("cli-restore-counters-check").render(lang));
}

fn print_counters(counters: &[BoxCounters], lang: Lang) {
    if counters.is_empty() {
        eprintln!("{}", msg!("cli-restore-counters-none").render(lang));
        return;
    }
    eprintln!("{}", msg!("cli-restore-counters-title").render(lang));
    for known in counters {
        let line = msg!(
            "cli-restore-counters-line",
            nim = known.nim.as_str(),
            tc = known.highest(),
            nif = known.nif.as_str(),
            sequence = known.sequence
        );
        eprintln!("{}", line.render(lang));
    }
}
