//! Loader of the MCF-SFE golden vectors (`protocols/mcf-sfe/vectors/*.txt`, format in
//! `vectors/README.md`).
//!
//! A shared test module, not part of the crate: this crate's tests use it with `mod vectors;`,
//! another crate's tests (the simulator's) with
//! `#[path = "../../protocols/mcf-sfe/tests/vectors/mod.rs"] mod vectors;` (path relative to
//! the including file). The vector files are embedded with `include_str!`, whose paths are
//! relative to this file, so the loader works from any crate and any working directory.
//!
//! It only reads the text: it knows nothing of the codec, so a vector can be checked
//! against the crate rather than against itself.
#![allow(dead_code)]

use std::collections::HashSet;
use std::fmt;

/// The vector files, by name.
pub const FILES: &[(&str, &str)] = &[
    (
        "host-to-device.txt",
        include_str!("../../vectors/host-to-device.txt"),
    ),
    (
        "device-to-host.txt",
        include_str!("../../vectors/device-to-host.txt"),
    ),
];

/// Replies of real boxes that differ from PROTOCOL.md: read by the tolerant reader, never
/// written by this crate, so they are kept apart from [`FILES`] (see [`firmware`]).
pub const FIRMWARE_FILE: (&str, &str) = (
    "firmware-variants.txt",
    include_str!("../../vectors/firmware-variants.txt"),
);

/// Which way the bytes travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `host->device`: a command frame.
    HostToDevice,
    /// `device->host`: a reply frame or a control byte.
    DeviceToHost,
}

/// What the vector's fields say the frame carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// A host -> device command frame.
    Request {
        /// SEQ byte.
        seq: u8,
        /// CMD byte.
        cmd: u8,
        /// DATA bytes (the `data:` text, unescaped from the file's notation).
        data: Vec<u8>,
    },
    /// A device -> host reply frame.
    Reply {
        /// SEQ byte.
        seq: u8,
        /// CMD byte.
        cmd: u8,
        /// DATA bytes.
        data: Vec<u8>,
        /// The 6 status bytes.
        status: [u8; 6],
    },
    /// A single control byte alone on the line (NAK, SYN).
    Control,
}

/// One golden vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vector {
    /// Unique name (`cmd-...`, `reply-...`, `control-...`).
    pub name: String,
    /// Direction.
    pub direction: Direction,
    /// The typed meaning in words (the `meaning:` lines joined by spaces).
    pub meaning: String,
    /// SEQ, CMD, DATA, STATUS as the vector states them.
    pub body: Body,
    /// The whole frame as it goes on the wire.
    pub frame: Vec<u8>,
    /// File the vector comes from.
    pub file: &'static str,
    /// Line of its `vector:` key.
    pub line: usize,
}

impl fmt::Display for Vector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}:{})", self.name, self.file, self.line)
    }
}

/// Every vector of every file, in file order. Panics with file and line on a format error.
pub fn all() -> Vec<Vector> {
    let mut vectors = Vec::new();
    let mut names = HashSet::new();
    for &(file, text) in FILES {
        for vector in parse(file, text).unwrap_or_else(|e| panic!("{e}")) {
            assert!(
                names.insert(vector.name.clone()),
                "duplicate vector name {vector}"
            );
            vectors.push(vector);
        }
    }
    vectors
}

/// Every vector of [`FIRMWARE_FILE`], in file order.
pub fn firmware() -> Vec<Vector> {
    let (file, text) = FIRMWARE_FILE;
    parse(file, text).unwrap_or_else(|e| panic!("{e}"))
}

/// The vector called `name`. Panics if there is none.
pub fn get(name: &str) -> Vector {
    all()
        .into_iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no golden vector named {name:?}"))
}

/// Uppercase spaced hex, as in the files (`01 24 20`).
pub fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Default)]
struct Draft {
    name: Option<String>,
    line: usize,
    direction: Option<Direction>,
    meaning: Vec<String>,
    seq: Option<u8>,
    cmd: Option<u8>,
    status: Option<[u8; 6]>,
    data: Option<Vec<u8>>,
    frame: Option<Vec<u8>>,
}

/// Parses the text of one vector file.
pub fn parse(file: &'static str, text: &str) -> Result<Vec<Vector>, String> {
    let mut vectors = Vec::new();
    let mut draft: Option<Draft> = None;
    let mut in_frame = false;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let at = |msg: String| format!("{file}:{line_no}: {msg}");
        let line = raw.trim_end();
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            in_frame = false;
            continue;
        }
        if trimmed.starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            // Continuation of `frame:`: hex bytes, then an optional `#` comment.
            let current = draft.as_mut().filter(|_| in_frame).ok_or_else(|| {
                at("indented line outside a frame: block (or after a blank line)".into())
            })?;
            let bytes = hex_bytes(line).map_err(at)?;
            current.frame.get_or_insert_with(Vec::new).extend(bytes);
            continue;
        }
        in_frame = false;
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| at(format!("expected `key: value`, got {line:?}")))?;
        let value = value.trim();
        if key == "vector" {
            if let Some(done) = draft.take() {
                vectors.push(finish(file, done)?);
            }
            if value.is_empty() {
                return Err(at("empty vector name".into()));
            }
            draft = Some(Draft {
                name: Some(value.to_owned()),
                line: line_no,
                ..Draft::default()
            });
            continue;
        }
        let current = draft
            .as_mut()
            .ok_or_else(|| at(format!("`{key}:` before the first `vector:`")))?;
        let duplicate = || at(format!("`{key}:` given twice"));
        match key {
            "dir" => {
                let direction = match value {
                    "host->device" => Direction::HostToDevice,
                    "device->host" => Direction::DeviceToHost,
                    other => {
                        return Err(at(format!(
                            "dir must be host->device or device->host, not {other:?}"
                        )))
                    }
                };
                set(&mut current.direction, direction).map_err(|_| duplicate())?;
            }
            "meaning" => current.meaning.push(value.to_owned()),
            "seq" => {
                set(&mut current.seq, one_byte(value).map_err(at)?).map_err(|_| duplicate())?
            }
            "cmd" => {
                set(&mut current.cmd, one_byte(value).map_err(at)?).map_err(|_| duplicate())?
            }
            "status" => {
                let bytes = hex_bytes(value).map_err(at)?;
                let status: [u8; 6] = bytes
                    .try_into()
                    .map_err(|b: Vec<u8>| at(format!("status has {} bytes, not 6", b.len())))?;
                set(&mut current.status, status).map_err(|_| duplicate())?;
            }
            "data" => {
                set(&mut current.data, quoted(value).map_err(at)?).map_err(|_| duplicate())?
            }
            "frame" => {
                let bytes = hex_bytes(value).map_err(at)?;
                set(&mut current.frame, bytes).map_err(|_| duplicate())?;
                in_frame = true;
            }
            other => return Err(at(format!("unknown key {other:?}"))),
        }
    }
    if let Some(done) = draft.take() {
        vectors.push(finish(file, done)?);
    }
    Ok(vectors)
}

fn set<T>(slot: &mut Option<T>, value: T) -> Result<(), ()> {
    if slot.is_some() {
        return Err(());
    }
    *slot = Some(value);
    Ok(())
}

fn finish(file: &'static str, draft: Draft) -> Result<Vector, String> {
    let name = draft.name.unwrap_or_default();
    let at = |msg: &str| format!("{file}:{}: vector {name}: {msg}", draft.line);
    let direction = draft.direction.ok_or_else(|| at("missing dir:"))?;
    if draft.meaning.is_empty() {
        return Err(at("missing meaning:"));
    }
    let frame = draft
        .frame
        .filter(|f| !f.is_empty())
        .ok_or_else(|| at("missing frame:"))?;
    let body = match (direction, draft.seq, draft.cmd, draft.data, draft.status) {
        (Direction::DeviceToHost, None, None, None, None) => {
            if frame.len() != 1 {
                return Err(at("a control vector (no seq/cmd/data) is one byte"));
            }
            Body::Control
        }
        (Direction::HostToDevice, Some(seq), Some(cmd), Some(data), None) => {
            Body::Request { seq, cmd, data }
        }
        (Direction::DeviceToHost, Some(seq), Some(cmd), Some(data), Some(status)) => Body::Reply {
            seq,
            cmd,
            data,
            status,
        },
        (Direction::HostToDevice, ..) => {
            return Err(at("host->device needs seq:, cmd:, data: and no status:"))
        }
        (Direction::DeviceToHost, ..) => return Err(at(
            "device->host needs seq:, cmd:, data: and status: (or none of them for a control byte)",
        )),
    };
    Ok(Vector {
        name,
        direction,
        meaning: draft.meaning.join(" "),
        body,
        frame,
        file,
        line: draft.line,
    })
}

/// Spaced two-digit hex bytes, up to an optional `#` comment.
fn hex_bytes(text: &str) -> Result<Vec<u8>, String> {
    let bytes = text.split('#').next().unwrap_or_default();
    bytes.split_whitespace().map(one_byte).collect()
}

fn one_byte(token: &str) -> Result<u8, String> {
    if token.len() != 2 {
        return Err(format!("{token:?} is not a two-digit hex byte"));
    }
    u8::from_str_radix(token, 16).map_err(|_| format!("{token:?} is not a two-digit hex byte"))
}

/// A `"..."` string with `\n`, `\t`, `\r`, `\\` and `\"` escapes, as UTF-8 bytes, and
/// `\xHH` for one raw byte.
fn quoted(text: &str) -> Result<Vec<u8>, String> {
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .filter(|_| text.len() >= 2)
        .ok_or_else(|| format!("data must be a \"quoted\" string, got {text}"))?;
    let mut out = Vec::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => out.push(b'\n'),
                Some('t') => out.push(b'\t'),
                Some('r') => out.push(b'\r'),
                Some('\\') => out.push(b'\\'),
                Some('"') => out.push(b'"'),
                Some('x') => {
                    let hex: String = chars.by_ref().take(2).collect();
                    out.push(one_byte(&hex)?);
                }
                other => return Err(format!("unknown escape \\{}", other.unwrap_or(' '))),
            },
            '"' => return Err("unescaped \" inside data".into()),
            c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    Ok(out)
}
