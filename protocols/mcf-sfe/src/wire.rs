//! Link-level constants and the small value types every frame carries:
//! the sequence number, the 4-nibble block check and the 6 status bytes.

/// Start of a frame.
pub const SOH: u8 = 0x01;
/// End of a frame.
pub const ETX: u8 = 0x03;
/// Separates DATA from the 6 status bytes in a device reply.
pub const STATUS_SEPARATOR: u8 = 0x04;
/// Ends the checksummed part of a frame.
pub const POSTAMBLE: u8 = 0x05;
/// Device -> host, alone on the line: the last frame was bad, send it again.
pub const NAK: u8 = 0x15;
/// Device -> host, alone on the line: still working, keep waiting.
pub const SYN: u8 = 0x16;

/// LEN and SEQ are sent with this offset so that they never look like control bytes.
pub const LEN_OFFSET: u8 = 0x20;
/// Bytes LEN counts besides DATA in a host frame: LEN, SEQ, CMD, POSTAMBLE.
pub const REQUEST_OVERHEAD: usize = 4;
/// Bytes LEN counts besides DATA in a device frame: LEN, SEQ, CMD, separator, 6 status, POSTAMBLE.
pub const REPLY_OVERHEAD: usize = REQUEST_OVERHEAD + 1 + STATUS_LEN;
/// Number of status bytes in a device reply.
pub const STATUS_LEN: usize = 6;
/// Bytes around the LEN-counted part: SOH before it, BCC(4) and ETX after it.
pub const FRAME_ENVELOPE: usize = 1 + BCC_LEN + 1;
/// Number of ASCII nibbles of the block check.
pub const BCC_LEN: usize = 4;
/// Largest DATA a host frame can carry (LEN is one byte: 0x20 + 4 + 219 = 0xFF).
pub const MAX_REQUEST_DATA: usize = (u8::MAX - LEN_OFFSET) as usize - REQUEST_OVERHEAD;
/// Largest DATA a device reply can carry.
pub const MAX_REPLY_DATA: usize = (u8::MAX - LEN_OFFSET) as usize - REPLY_OVERHEAD;
/// Largest whole frame on the wire, in either direction.
pub const MAX_FRAME_LEN: usize = (u8::MAX - LEN_OFFSET) as usize + FRAME_ENVELOPE;

/// A receiver holding an incomplete frame that sees no new byte for this long drops the
/// frame's SOH and rescans ([`crate::codec::drop_stalled`]): a stray `01 FF` on the line must
/// not hide the frames behind it (assumed; a frame takes 20 ms at 115200 baud).
pub const INTER_BYTE_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(100);

/// Sequence number of a host command, 0x20..=0xFF, +1 per new command, wrapping to 0x20.
/// A retransmission reuses the same value; the device answers it with its last reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Seq(u8);

impl Seq {
    /// The first sequence number after power-up.
    pub const FIRST: Seq = Seq(LEN_OFFSET);

    /// `None` for a byte below 0x20.
    pub fn new(byte: u8) -> Option<Seq> {
        (byte >= LEN_OFFSET).then_some(Seq(byte))
    }

    /// The byte sent on the wire.
    pub fn get(self) -> u8 {
        self.0
    }

    /// The sequence number of the next new command.
    #[must_use]
    pub fn next(self) -> Seq {
        if self.0 == u8::MAX {
            Seq::FIRST
        } else {
            Seq(self.0 + 1)
        }
    }
}

/// The SEQ values a host uses, `first` to `last` and round again: 0x20..=0xFF by default
/// (PROTOCOL.md §3.1), narrower for a box that needs it (0x20..=0x7F, or a single value).
/// A SEQ below 0x20 is never used: LEN, SEQ and status bytes then never look like a control
/// byte, which the decoder's resync relies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SeqRange {
    first: Seq,
    last: Seq,
}

impl SeqRange {
    /// 0x20..=0xFF.
    pub const FULL: SeqRange = SeqRange {
        first: Seq(LEN_OFFSET),
        last: Seq(u8::MAX),
    };

    /// `first..=last`; `None` if `first` is below 0x20 or after `last`.
    pub fn new(first: u8, last: u8) -> Option<SeqRange> {
        (first >= LEN_OFFSET && first <= last).then_some(SeqRange {
            first: Seq(first),
            last: Seq(last),
        })
    }

    /// The first value.
    pub fn first(self) -> Seq {
        self.first
    }

    /// The last value.
    pub fn last(self) -> Seq {
        self.last
    }

    /// The SEQ of the command after one sent with `seq`: the next value, or `first` after
    /// `last` (and for a `seq` outside the range).
    pub fn after(self, seq: Seq) -> Seq {
        if seq < self.first || seq >= self.last {
            self.first
        } else {
            Seq(seq.0 + 1)
        }
    }
}

impl Default for SeqRange {
    fn default() -> Self {
        SeqRange::FULL
    }
}

impl Default for Seq {
    fn default() -> Self {
        Seq::FIRST
    }
}

/// The block check: 16-bit wrapping sum of `bytes` (LEN..=POSTAMBLE), sent as 4 ASCII
/// nibbles, most significant first, each nibble + 0x30 (so `0x1A2F` is `31 3A 32 3F`).
pub fn bcc(bytes: &[u8]) -> [u8; BCC_LEN] {
    let sum = bytes
        .iter()
        .fold(0u16, |acc, &b| acc.wrapping_add(u16::from(b)));
    encode_bcc(sum)
}

/// The 4 wire bytes of a 16-bit block check value.
pub fn encode_bcc(sum: u16) -> [u8; BCC_LEN] {
    let nibble = |shift: u16| 0x30 + ((sum >> shift) & 0x0F) as u8;
    [nibble(12), nibble(8), nibble(4), nibble(0)]
}

/// The value of 4 wire bytes of a block check; `None` when a byte is not 0x30..=0x3F.
pub fn decode_bcc(bytes: &[u8; BCC_LEN]) -> Option<u16> {
    bytes.iter().try_fold(0u16, |acc, &b| {
        (0x30..=0x3F)
            .contains(&b)
            .then(|| (acc << 4) | u16::from(b - 0x30))
    })
}

/// The 6 status bytes of a device reply. The real e-MCF bit map is not public: the gateway
/// treats the bytes as opaque except for the bits named in [`StatusFlag`], which are the
/// simulator's map (see PROTOCOL.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Status(pub [u8; STATUS_LEN]);

/// Bit 7 of every status byte is always set by the simulator, so status bytes never look
/// like control bytes on the line.
pub const STATUS_FILLER: u8 = 0x80;

impl Default for Status {
    fn default() -> Self {
        Status([STATUS_FILLER; STATUS_LEN])
    }
}

/// The status bits this project gives a meaning to (the simulator's map; assumed for real boxes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatusFlag {
    /// S0.0: the last command had a syntax error.
    SyntaxError,
    /// S0.1: the last command was refused (reply DATA starts `E:`).
    CommandRefused,
    /// S0.2: the device clock is not set or not plausible.
    ClockError,
    /// S1.0: an invoice is open (C0h accepted, no 38h yet).
    InvoiceOpen,
    /// S1.1: a client (C3h) is set for the next invoice.
    ClientSet,
    /// S1.2: a finalization is in progress (38h answered `P:`).
    FinalizePending,
    /// S2.0: fiscal memory nearly full.
    FiscalMemoryNearlyFull,
    /// S2.1: fiscal memory full; no invoice can be finalized.
    FiscalMemoryFull,
    /// S3.0: the device has not reached the DGI server for too long.
    DgiLinkOverdue,
}

impl StatusFlag {
    /// Every named flag, in map order.
    pub const ALL: [StatusFlag; 9] = [
        StatusFlag::SyntaxError,
        StatusFlag::CommandRefused,
        StatusFlag::ClockError,
        StatusFlag::InvoiceOpen,
        StatusFlag::ClientSet,
        StatusFlag::FinalizePending,
        StatusFlag::FiscalMemoryNearlyFull,
        StatusFlag::FiscalMemoryFull,
        StatusFlag::DgiLinkOverdue,
    ];

    /// (status byte index, bit index) of the flag.
    pub fn position(self) -> (usize, u8) {
        match self {
            StatusFlag::SyntaxError => (0, 0),
            StatusFlag::CommandRefused => (0, 1),
            StatusFlag::ClockError => (0, 2),
            StatusFlag::InvoiceOpen => (1, 0),
            StatusFlag::ClientSet => (1, 1),
            StatusFlag::FinalizePending => (1, 2),
            StatusFlag::FiscalMemoryNearlyFull => (2, 0),
            StatusFlag::FiscalMemoryFull => (2, 1),
            StatusFlag::DgiLinkOverdue => (3, 0),
        }
    }
}

impl Status {
    /// Whether `flag` is set.
    pub fn has(&self, flag: StatusFlag) -> bool {
        let (byte, bit) = flag.position();
        self.0[byte] & (1 << bit) != 0
    }

    /// Sets or clears `flag`.
    pub fn set(&mut self, flag: StatusFlag, on: bool) {
        let (byte, bit) = flag.position();
        if on {
            self.0[byte] |= 1 << bit;
        } else {
            self.0[byte] &= !(1 << bit);
        }
    }

    /// A status with the given flags set (and the filler bit in every byte).
    pub fn with(flags: &[StatusFlag]) -> Status {
        let mut status = Status::default();
        for &flag in flags {
            status.set(flag, true);
        }
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seq_wraps_from_ff_to_20() {
        assert_eq!(Seq::new(0xFF).map(Seq::next), Seq::new(0x20));
        assert_eq!(Seq::FIRST.next().get(), 0x21);
        assert_eq!(Seq::new(0x1F), None);
    }

    #[test]
    fn seq_ranges_wrap_at_their_last_value() {
        let narrow = SeqRange::new(0x20, 0x7F).unwrap();
        assert_eq!(narrow.after(Seq(0x7E)), Seq(0x7F));
        assert_eq!(narrow.after(Seq(0x7F)), Seq(0x20));
        assert_eq!(narrow.after(Seq(0xC0)), Seq(0x20));
        let single = SeqRange::new(0x20, 0x20).unwrap();
        assert_eq!(single.after(Seq(0x20)), Seq(0x20));
        assert_eq!(SeqRange::FULL.after(Seq(0xFF)), Seq(0x20));
        assert_eq!(SeqRange::new(0x1F, 0x7F), None);
        assert_eq!(SeqRange::new(0x80, 0x7F), None);
    }

    #[test]
    fn bcc_is_the_byte_sum_as_offset_nibbles() {
        // 0x2A + 0x20 + 0xC1 + 0x05 = 0x0110
        assert_eq!(bcc(&[0x2A, 0x20, 0xC1, 0x05]), [0x30, 0x31, 0x31, 0x30]);
        assert_eq!(decode_bcc(&[0x30, 0x31, 0x31, 0x30]), Some(0x0110));
        assert_eq!(encode_bcc(0xFFFF), [0x3F; 4]);
        assert_eq!(decode_bcc(&[0x30, 0x31, 0x41, 0x30]), None);
    }

    #[test]
    fn status_flags_do_not_overlap_and_keep_the_filler_bit() {
        let all = Status::with(&StatusFlag::ALL);
        for flag in StatusFlag::ALL {
            let only = Status::with(&[flag]);
            assert!(only.has(flag));
            let others = StatusFlag::ALL.iter().filter(|&&f| f != flag);
            for &other in others {
                assert!(!only.has(other), "{flag:?} also sets {other:?}");
            }
            assert!(only.0.iter().all(|b| b & STATUS_FILLER != 0));
        }
        assert!(all.has(StatusFlag::DgiLinkOverdue));
    }
}
