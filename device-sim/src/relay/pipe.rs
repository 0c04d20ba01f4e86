//! One direction of the relay, without I/O or clocks: bytes in, faulted bytes out.
//!
//! The pipe finds frames in the byte stream the way the codec does (a SOH, then as many bytes
//! as LEN announces, ETX last), so frame faults hit whole frames and rules can match a frame's
//! CMD. Bytes outside frames (NAK, SYN, noise) pass through as they come. What comes out is a
//! list of [`Emit`]s the task writes in order, each after its extra delay.
//!
//! Every random choice comes from one seeded generator per direction, drawn in a fixed order
//! per byte and per frame: the same seed and the same input bytes give the same output, and
//! the other direction's traffic does not shift this one's faults.

pub(crate) use crate::faults::SplitMix64;
use std::collections::VecDeque;
use std::time::Duration;

use mcf_sfe::wire::{ETX, LEN_OFFSET, POSTAMBLE, REPLY_OVERHEAD, REQUEST_OVERHEAD, SOH};

use super::{Direction, DirectionFaults, DirectionStats, Rule, RuleAction};

use super::MAX_GARBAGE_BURST as MAX_GARBAGE;

/// Bytes to write, `delay` after the previous ones were due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Emit {
    pub bytes: Vec<u8>,
    pub delay: Option<Duration>,
}

/// One direction's frame finder and fault injector.
#[derive(Debug)]
pub(crate) struct Pipe {
    direction: Direction,
    faults: DirectionFaults,
    rng: SplitMix64,
    /// The frame being collected (starts with SOH), empty outside a frame.
    partial: Vec<u8>,
    /// Clean copies of the last frames, for stale injection (newest last).
    history: VecDeque<Vec<u8>>,
    rules: Vec<Rule>,
    pub stats: DirectionStats,
}

impl Pipe {
    pub(crate) fn new(direction: Direction, faults: DirectionFaults, seed: u64) -> Pipe {
        Pipe {
            direction,
            faults,
            rng: SplitMix64(seed),
            partial: Vec::new(),
            history: VecDeque::new(),
            rules: Vec::new(),
            stats: DirectionStats::default(),
        }
    }

    /// New probabilities; the generator goes on where it was.
    pub(crate) fn set_faults(&mut self, faults: DirectionFaults) {
        self.faults = faults;
        while self.history.len() > self.faults.stale_depth {
            self.history.pop_front();
        }
    }

    pub(crate) fn arm(&mut self, rule: Rule) {
        if rule.times > 0 {
            self.rules.push(rule);
        }
    }

    /// Rules armed and not used up yet.
    pub(crate) fn armed(&self) -> usize {
        self.rules.len()
    }

    /// Whether a frame is being collected (the task flushes it after a quiet time).
    pub(crate) fn has_partial(&self) -> bool {
        !self.partial.is_empty()
    }

    /// Forgets a frame being collected (its source went away).
    pub(crate) fn reset(&mut self) {
        self.partial.clear();
    }

    /// Takes bytes from the source; appends what to write to `out`.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<Emit>) {
        self.stats.bytes_in += bytes.len() as u64;
        let mut loose = Vec::new();
        let mut queue: VecDeque<u8> = bytes.iter().copied().collect();
        while let Some(byte) = queue.pop_front() {
            if self.partial.is_empty() {
                if byte == SOH {
                    self.partial.push(byte);
                } else {
                    loose.push(byte);
                }
                continue;
            }
            self.partial.push(byte);
            match self.check_partial() {
                Partial::Incomplete => {}
                Partial::Frame => {
                    self.pass_loose(&mut loose, out);
                    let frame = std::mem::take(&mut self.partial);
                    self.frame(frame, out);
                }
                Partial::NotAFrame => {
                    // The SOH was noise: it passes as a loose byte and the bytes behind it
                    // are scanned again (one may be the real SOH).
                    let rest: Vec<u8> = self.partial.drain(..).skip(1).collect();
                    loose.push(SOH);
                    for byte in rest.into_iter().rev() {
                        queue.push_front(byte);
                    }
                }
            }
        }
        self.pass_loose(&mut loose, out);
    }

    /// The source went quiet in the middle of a frame: what was collected passes as it is.
    pub(crate) fn flush_partial(&mut self, out: &mut Vec<Emit>) {
        let mut bytes = std::mem::take(&mut self.partial);
        if !bytes.is_empty() {
            self.stats.partial_flushes += 1;
            self.pass_loose(&mut bytes, out);
        }
    }

    fn check_partial(&self) -> Partial {
        let frame = &self.partial;
        let Some(&len) = frame.get(1) else {
            return Partial::Incomplete;
        };
        let overhead = match self.direction {
            Direction::ToDevice => REQUEST_OVERHEAD,
            Direction::ToHost => REPLY_OVERHEAD,
        };
        if len < LEN_OFFSET || usize::from(len - LEN_OFFSET) < overhead {
            return Partial::NotAFrame;
        }
        let counted = usize::from(len - LEN_OFFSET);
        let total = 1 + counted + 5;
        if frame.len() < total {
            return Partial::Incomplete;
        }
        if frame[counted] != POSTAMBLE || frame[total - 1] != ETX {
            return Partial::NotAFrame;
        }
        Partial::Frame
    }

    /// Bytes outside frames: byte faults only.
    fn pass_loose(&mut self, loose: &mut Vec<u8>, out: &mut Vec<Emit>) {
        if loose.is_empty() {
            return;
        }
        let bytes = std::mem::take(loose);
        let bytes = self.byte_faults(bytes);
        self.push(out, bytes, None);
    }

    /// One whole frame (clean, as the source sent it).
    fn frame(&mut self, frame: Vec<u8>, out: &mut Vec<Emit>) {
        let cmd = frame[3];
        self.stats.frames += 1;
        *self.stats.by_cmd.entry(cmd).or_default() += 1;

        let mut copies = 1usize;
        let mut delay = None;
        if let Some(index) = self
            .rules
            .iter()
            .position(|rule| rule.cmd.is_none_or(|c| c == cmd))
        {
            let rule = &mut self.rules[index];
            rule.times -= 1;
            let action = rule.action;
            if rule.times == 0 {
                self.rules.remove(index);
            }
            self.stats.faults.rules_fired += 1;
            match action {
                RuleAction::Drop => copies = 0,
                RuleAction::Duplicate => copies = 2,
                RuleAction::Delay(by) => delay = Some(by),
            }
        }

        // Fixed order of draws; a probability of 0 draws nothing.
        let faults = self.faults.clone();
        if self.rng.chance(faults.garbage) {
            let len = 1 + self.rng.below(MAX_GARBAGE);
            let burst: Vec<u8> = (0..len)
                .map(|_| match self.rng.below(256) as u8 {
                    // Never a SOH: the burst tests resync, not luck.
                    SOH => 0xFE,
                    b => b,
                })
                .collect();
            self.stats.faults.garbage_bursts += 1;
            self.push(out, burst, None);
        }
        if self.rng.chance(faults.stale_frame) && !self.history.is_empty() {
            let pick = self.rng.below(self.history.len());
            let stale = self.history[pick].clone();
            self.stats.faults.stale_frames += 1;
            let stale = self.byte_faults(stale);
            self.push(out, stale, None);
        }
        if copies > 0 && self.rng.chance(faults.drop_frame) {
            copies = 0;
        }
        if copies == 0 {
            self.stats.faults.dropped_frames += 1;
        }
        if copies > 0 && self.rng.chance(faults.delay_frame) {
            delay = Some(delay.unwrap_or_default() + faults.delay_for);
        }
        if delay.is_some() && copies > 0 {
            self.stats.faults.delayed_frames += 1;
        }
        if copies > 0 && self.rng.chance(faults.duplicate_frame) {
            copies += 1;
        }
        if copies > 1 {
            self.stats.faults.duplicated_frames += (copies - 1) as u64;
        }
        for copy in 0..copies {
            let bytes = self.byte_faults(frame.clone());
            self.stats.frames_forwarded += 1;
            self.push(out, bytes, if copy == 0 { delay } else { None });
        }

        if faults.stale_depth > 0 {
            if self.history.len() >= faults.stale_depth {
                self.history.pop_front();
            }
            self.history.push_back(frame);
        }
    }

    /// Drops and flips single bytes.
    fn byte_faults(&mut self, bytes: Vec<u8>) -> Vec<u8> {
        let (drop, flip) = (self.faults.drop_byte, self.faults.flip_bit);
        if drop <= 0.0 && flip <= 0.0 {
            return bytes;
        }
        let mut kept = Vec::with_capacity(bytes.len());
        for mut byte in bytes {
            if self.rng.chance(drop) {
                self.stats.faults.dropped_bytes += 1;
                continue;
            }
            if self.rng.chance(flip) {
                byte ^= 1 << self.rng.below(8);
                self.stats.faults.flipped_bits += 1;
            }
            kept.push(byte);
        }
        kept
    }

    fn push(&mut self, out: &mut Vec<Emit>, bytes: Vec<u8>, delay: Option<Duration>) {
        if !bytes.is_empty() || delay.is_some() {
            out.push(Emit { bytes, delay });
        }
    }
}

enum Partial {
    Incomplete,
    Frame,
    NotAFrame,
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcf_sfe::{Command, ReplyFrame, Seq, Status};

    fn request(seq: u8, cmd: &Command) -> Vec<u8> {
        cmd.to_frame(Seq::new(seq).unwrap()).unwrap().to_bytes()
    }

    fn reply(seq: u8, cmd: u8, data: &str) -> Vec<u8> {
        ReplyFrame::new(
            Seq::new(seq).unwrap(),
            cmd,
            data.as_bytes().to_vec(),
            Status::default(),
        )
        .unwrap()
        .to_bytes()
    }

    fn run(pipe: &mut Pipe, chunks: &[&[u8]]) -> Vec<Emit> {
        let mut out = Vec::new();
        for chunk in chunks {
            pipe.feed(chunk, &mut out);
        }
        out
    }

    fn joined(out: &[Emit]) -> Vec<u8> {
        out.iter().flat_map(|e| e.bytes.clone()).collect()
    }

    #[test]
    fn frames_split_anywhere_are_found_and_loose_bytes_pass() {
        let c1 = request(0x20, &Command::DeviceState);
        let c2 = request(0x21, &Command::LinkState);
        let mut input = vec![0x16, 0x00];
        input.extend(&c1);
        input.push(0x15);
        input.extend(&c2);
        for split in 0..input.len() {
            let mut pipe = Pipe::new(Direction::ToDevice, DirectionFaults::default(), 1);
            let out = run(&mut pipe, &[&input[..split], &input[split..]]);
            assert_eq!(joined(&out), input, "split at {split}");
            assert_eq!(pipe.stats.frames, 2);
            assert_eq!(pipe.stats.by_cmd.get(&0xC1), Some(&1));
            assert_eq!(pipe.stats.by_cmd.get(&0xC2), Some(&1));
        }
    }

    #[test]
    fn a_false_start_passes_and_the_frame_behind_it_is_found() {
        let r = reply(0x22, 0x38, "R:1");
        // `01 01` (LEN too small), then `01 FF`-like start that is not a frame.
        let mut input = vec![0x01, 0x01];
        input.extend(&r);
        let mut pipe = Pipe::new(Direction::ToHost, DirectionFaults::default(), 1);
        pipe.arm(Rule {
            direction: Direction::ToHost,
            cmd: Some(0x38),
            action: RuleAction::Drop,
            times: 1,
        });
        let out = run(&mut pipe, &[&input]);
        assert_eq!(joined(&out), vec![0x01, 0x01]);
        assert_eq!(pipe.stats.frames, 1);
        assert_eq!(pipe.stats.faults.dropped_frames, 1);
    }

    #[test]
    fn a_partial_frame_is_flushed_as_it_is() {
        let r = reply(0x22, 0x31, "");
        let mut pipe = Pipe::new(Direction::ToHost, DirectionFaults::default(), 1);
        let out = run(&mut pipe, &[&r[..5]]);
        assert!(out.is_empty());
        assert!(pipe.has_partial());
        let mut out = Vec::new();
        pipe.flush_partial(&mut out);
        assert_eq!(joined(&out), &r[..5]);
        assert!(!pipe.has_partial());
        assert_eq!(pipe.stats.partial_flushes, 1);
    }

    #[test]
    fn rules_match_the_cmd_and_are_used_up() {
        let mut pipe = Pipe::new(Direction::ToHost, DirectionFaults::default(), 1);
        pipe.arm(Rule {
            direction: Direction::ToHost,
            cmd: Some(0x38),
            action: RuleAction::Drop,
            times: 2,
        });
        let c1 = reply(0x20, 0xC1, "x");
        let f1 = reply(0x21, 0x38, "R:1");
        let f2 = reply(0x21, 0x38, "R:1");
        let f3 = reply(0x22, 0x38, "R:2");
        let out = run(&mut pipe, &[&c1, &f1, &f2, &f3]);
        let mut expected = c1.clone();
        expected.extend(&f3);
        assert_eq!(joined(&out), expected);
        assert_eq!(pipe.stats.faults.rules_fired, 2);
        assert_eq!(pipe.armed(), 0);
    }
}
