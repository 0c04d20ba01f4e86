//! Fault injection for the link: what a flaky cable, a noisy line or a dying box does.
//!
//! Every random choice comes from one seeded generator, so a run with the same `--seed`, the
//! same flags and the same host traffic injects the same faults at the same commands.

use std::time::Duration;

pub mod spec;

use spec::{FaultKind, FaultList, FaultSpec, SetBy};

/// Longest `delay-ms`, in milliseconds ([`crate::config::MAX_TIMING`]).
pub const MAX_DELAY_MS: u64 = 3_600_000;

/// `--seed`: not a fault but the seed of the faults' generator, so an option of its own (not in
/// [`BOX_FAULTS`], named in its intro); its help and the refusal of a wrong value are drawn
/// from here like a fault's.
pub const SEED: FaultSpec = FaultSpec {
    name: "seed",
    kind: FaultKind::Seed,
    what: "Seed of the fault generator (default 0): the same seed, flags and host traffic \
           give the same faults at the same commands.",
    example: "7",
};

/// `--corrupt-replies`.
pub const CORRUPT_REPLIES: FaultSpec = FaultSpec {
    name: "corrupt-replies",
    kind: FaultKind::Probability,
    what: "Flips one bit of a reply: the host sees a bad checksum.",
    example: "0.05",
};

/// `--drop-replies`.
pub const DROP_REPLIES: FaultSpec = FaultSpec {
    name: "drop-replies",
    kind: FaultKind::Probability,
    what: "Sends no reply: the host times out and sends again.",
    example: "0.1",
};

/// `--garbage`.
pub const GARBAGE: FaultSpec = FaultSpec {
    name: "garbage",
    kind: FaultKind::Probability,
    what: "Sends 1 to 24 garbage bytes (never SOH) before a reply.",
    example: "0.2",
};

/// `--delay`.
pub const DELAY: FaultSpec = FaultSpec {
    name: "delay",
    kind: FaultKind::Probability,
    what: "Answers late, by --delay-ms.",
    example: "0.1",
};

/// `--delay-ms`.
pub const DELAY_MS: FaultSpec = FaultSpec {
    name: "delay-ms",
    kind: FaultKind::Milliseconds { max: MAX_DELAY_MS },
    what: "How late a late reply is (default 800).",
    example: "1500",
};

/// `--refuse-next`.
pub const REFUSE_NEXT: FaultSpec = FaultSpec {
    name: "refuse-next",
    kind: FaultKind::Count,
    what: "Refuses the next N commands with E: without executing them.",
    example: "1",
};

/// `--refuse-cmd`.
pub const REFUSE_CMD: FaultSpec = FaultSpec {
    name: "refuse-cmd",
    kind: FaultKind::CommandCode,
    what: "With --refuse-next: only this command counts and is refused (C0: the \
               opening of an invoice); without it, any command.",
    example: "C0",
};

/// `--power-cut-after-finalize`.
pub const POWER_CUT_AFTER_FINALIZE: FaultSpec = FaultSpec {
    name: "power-cut-after-finalize",
    kind: FaultKind::Ordinal,
    what: "Cuts the power at the Nth finalization: the invoice is committed to fiscal \
               memory, its reply is never sent, the simulator exits with code 3.",
    example: "1",
};

/// `--vanish-after`.
pub const VANISH_AFTER: FaultSpec = FaultSpec {
    name: "vanish-after",
    kind: FaultKind::Ordinal,
    what: "Closes the port after answering N commands; the simulator exits with code 4.",
    example: "5",
};

/// The box's faults: flags of `emcf-sim`, read at start.
pub const BOX_FAULTS: FaultList = FaultList {
    title: "Faults of the box (emcf-sim), set with flags at start",
    set_by: SetBy::Flag,
    intro: "All off by default; the random ones are drawn per reply from one generator seeded \
            with the option --seed N (default 0: the same seed, flags and host traffic give the \
            same faults at the same commands).",
    how: "emcf-sim --pty --ephemeral --drop-replies 0.1 --seed 7",
    faults: &[
        CORRUPT_REPLIES,
        DROP_REPLIES,
        GARBAGE,
        DELAY,
        DELAY_MS,
        REFUSE_NEXT,
        REFUSE_CMD,
        POWER_CUT_AFTER_FINALIZE,
        VANISH_AFTER,
    ],
};

/// What to inject. Probabilities are per reply, 0.0 to 1.0.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultConfig {
    /// Seed of the generator.
    pub seed: u64,
    /// Probability of flipping one byte of a reply (the host sees a bad checksum).
    pub corrupt_reply: f64,
    /// Probability of not sending a reply at all (the host times out and resends).
    pub drop_reply: f64,
    /// Probability of sending a burst of garbage bytes before a reply.
    pub garbage_burst: f64,
    /// Probability of answering late.
    pub delay: f64,
    /// How late, when late.
    pub delay_for: Duration,
    /// Refuse this many commands (from the first) with `E:` without executing them.
    pub refuse_next: u32,
    /// Count and refuse only commands with this CMD (`None`: any command), so that a test can
    /// have the box refuse an invoice (C0h) whatever status reads come before it.
    pub refuse_only: Option<u8>,
    /// Cut the power at the Nth finalization (1 = the first): the invoice is committed to
    /// fiscal memory, the reply is never sent and the port closes.
    pub power_cut_at_finalize: Option<u32>,
    /// Close the port after answering this many commands.
    pub vanish_after: Option<u64>,
}

impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig {
            seed: 0,
            corrupt_reply: 0.0,
            drop_reply: 0.0,
            garbage_burst: 0.0,
            delay: 0.0,
            delay_for: Duration::from_millis(800),
            refuse_next: 0,
            refuse_only: None,
            power_cut_at_finalize: None,
            vanish_after: None,
        }
    }
}

impl FaultConfig {
    /// Whether any fault is configured.
    pub fn any(&self) -> bool {
        *self
            != FaultConfig {
                seed: self.seed,
                delay_for: self.delay_for,
                ..FaultConfig::default()
            }
    }
}

/// What to do to one reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplyFaults {
    /// Garbage to send before the reply.
    pub garbage: Vec<u8>,
    /// Extra wait before the reply.
    pub delay: Option<Duration>,
    /// Send nothing.
    pub drop: bool,
    /// Flip this byte index (modulo the frame length) with this mask.
    pub corrupt: Option<(usize, u8)>,
}

/// The injector's state across one link session.
#[derive(Debug)]
pub struct Faults {
    config: FaultConfig,
    rng: SplitMix64,
    refusals_left: u32,
    finalizations: u32,
    answered: u64,
}

impl Faults {
    /// A fresh injector.
    pub fn new(config: FaultConfig) -> Faults {
        Faults {
            rng: SplitMix64(config.seed),
            refusals_left: config.refuse_next,
            finalizations: 0,
            answered: 0,
            config,
        }
    }

    /// Whether command `cmd` is to be refused unexecuted (counts it down).
    pub fn refuse_command(&mut self, cmd: u8) -> bool {
        if self.refusals_left == 0 || self.config.refuse_only.is_some_and(|only| only != cmd) {
            return false;
        }
        self.refusals_left -= 1;
        true
    }

    /// Called when a command committed an invoice; whether the power goes now.
    pub fn power_cut_on_finalize(&mut self) -> bool {
        self.finalizations += 1;
        self.config.power_cut_at_finalize == Some(self.finalizations)
    }

    /// The faults for the next reply.
    pub fn for_reply(&mut self) -> ReplyFaults {
        let mut faults = ReplyFaults::default();
        if self.rng.chance(self.config.garbage_burst) {
            let len = 1 + self.rng.below(24);
            // Garbage never contains SOH, so the host's resync is what is tested, not luck.
            faults.garbage = (0..len)
                .map(|_| match self.rng.below(256) as u8 {
                    0x01 => 0xFE,
                    b => b,
                })
                .collect();
        }
        if self.rng.chance(self.config.delay) {
            faults.delay = Some(self.config.delay_for);
        }
        faults.drop = self.rng.chance(self.config.drop_reply);
        if self.rng.chance(self.config.corrupt_reply) {
            let bit = self.rng.below(8) as u32;
            faults.corrupt = Some((self.rng.below(usize::MAX), 1u8 << bit));
        }
        faults
    }

    /// Called after each answered command; whether the port vanishes now.
    pub fn vanish_after_answer(&mut self) -> bool {
        self.answered += 1;
        self.config.vanish_after == Some(self.answered)
    }
}

/// SplitMix64: tiny, good enough for fault dice, and stable across crate versions. Shared by
/// the link's faults and the relay's.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// True with probability `p`; never draws when `p` is 0, so unused faults do not shift
    /// the sequence of the others.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_faults() {
        let config = FaultConfig {
            seed: 42,
            corrupt_reply: 0.3,
            garbage_burst: 0.5,
            drop_reply: 0.2,
            ..FaultConfig::default()
        };
        let run = |config: &FaultConfig| {
            let mut faults = Faults::new(config.clone());
            (0..50).map(|_| faults.for_reply()).collect::<Vec<_>>()
        };
        let first = run(&config);
        assert_eq!(first, run(&config));
        assert!(first.iter().any(|f| f.corrupt.is_some()));
        assert!(first.iter().any(|f| f.corrupt.is_none()));
        assert!(first.iter().all(|f| !f.garbage.contains(&0x01)));
        let other = run(&FaultConfig { seed: 43, ..config });
        assert_ne!(first, other);
    }

    #[test]
    fn no_config_no_faults() {
        let mut faults = Faults::new(FaultConfig::default());
        assert!(!FaultConfig::default().any());
        for _ in 0..100 {
            assert_eq!(faults.for_reply(), ReplyFaults::default());
            assert!(!faults.refuse_command(0xC1));
            assert!(!faults.power_cut_on_finalize());
            assert!(!faults.vanish_after_answer());
        }
    }

    #[test]
    fn counted_faults_fire_once_at_their_count() {
        let mut faults = Faults::new(FaultConfig {
            refuse_next: 2,
            power_cut_at_finalize: Some(2),
            vanish_after: Some(3),
            ..FaultConfig::default()
        });
        assert_eq!(
            (0..4)
                .map(|_| faults.refuse_command(0xC1))
                .collect::<Vec<_>>(),
            [true, true, false, false]
        );
        assert!(!faults.power_cut_on_finalize());
        assert!(faults.power_cut_on_finalize());
        assert!(!faults.power_cut_on_finalize());
        assert!(!faults.vanish_after_answer());
        assert!(!faults.vanish_after_answer());
        assert!(faults.vanish_after_answer());
    }

    #[test]
    fn a_refusal_for_one_command_lets_the_others_through() {
        let mut faults = Faults::new(FaultConfig {
            refuse_next: 1,
            refuse_only: Some(0xC0),
            ..FaultConfig::default()
        });
        assert!(!faults.refuse_command(0xC1));
        assert!(!faults.refuse_command(0xC3));
        assert!(faults.refuse_command(0xC0));
        assert!(!faults.refuse_command(0xC0));
    }
}
