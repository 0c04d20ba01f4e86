//! Reading one record back by its place (the index's way to a register entry).

use std::path::Path;

use super::{JournalFile, Place, HEADER, MAX_RECORD};
use crate::store::error::{io_at, DamageAt, StoreError};

/// The payload of the record at `place` in `file` (the journal at `path`), once its header
/// announces that length and its CRC matches. Positioned reads: any number of threads may
/// read one `File` at once, beside the appends.
pub fn payload_at<F: JournalFile>(
    file: &F,
    place: Place,
    path: &Path,
) -> Result<Vec<u8>, StoreError> {
    let damaged = |reason: String| StoreError::damaged(DamageAt::Offset(place.start), reason);
    if place.len == 0 || place.len > MAX_RECORD {
        return Err(damaged(format!("no record has a length of {}", place.len)));
    }
    let mut bytes = vec![0u8; HEADER as usize + place.len as usize];
    file.read_exact_at(&mut bytes, place.start).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            damaged(format!(
                "the index places a record of {} bytes here, past the journal's end",
                place.len
            ))
        } else {
            io_at(path, "reading", e)
        }
    })?;
    let (header, payload) = bytes.split_at(HEADER as usize);
    let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    if len != place.len {
        return Err(damaged(format!(
            "the record here is {len} bytes long, the index says {}",
            place.len
        )));
    }
    if crc32fast::hash(payload) != crc {
        return Err(damaged("CRC mismatch".to_string()));
    }
    bytes.drain(..HEADER as usize);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use super::*;
    use crate::store::embedded::journal::frame;

    fn journal(dir: &Path, payloads: &[&[u8]]) -> (File, Vec<Place>) {
        let path = dir.join("journal.log");
        let mut bytes = Vec::new();
        let mut places = Vec::new();
        for payload in payloads {
            places.push(Place {
                start: bytes.len() as u64,
                len: payload.len() as u32,
            });
            bytes.extend(frame(payload));
        }
        std::fs::write(&path, bytes).unwrap();
        (File::open(&path).unwrap(), places)
    }

    #[test]
    fn reads_each_record_at_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let (file, places) = journal(dir.path(), &[b"{\"a\":1}", b"{\"b\":22}"]);
        assert_eq!(
            payload_at(&file, places[1], dir.path()).unwrap(),
            b"{\"b\":22}"
        );
        assert_eq!(
            payload_at(&file, places[0], dir.path()).unwrap(),
            b"{\"a\":1}"
        );
    }

    #[test]
    fn a_wrong_place_or_a_changed_byte_is_damage_never_data() {
        let dir = tempfile::tempdir().unwrap();
        let (file, places) = journal(dir.path(), &[b"{\"a\":1}", b"{\"b\":22}"]);
        let damage = |place: Place| match payload_at(&file, place, dir.path()) {
            Err(StoreError::Damaged { seq_or_offset, .. }) => seq_or_offset,
            other => panic!("{place:?}: {other:?}"),
        };
        let shifted = Place {
            start: places[1].start + 1,
            ..places[1]
        };
        assert_eq!(damage(shifted), DamageAt::Offset(shifted.start));
        let longer = Place {
            len: 8,
            ..places[0]
        };
        assert_eq!(damage(longer), DamageAt::Offset(0));
        let past_end = Place {
            start: places[1].start,
            len: 100,
        };
        assert_eq!(damage(past_end), DamageAt::Offset(places[1].start));

        let path = dir.path().join("journal.log");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[places[1].start as usize + 10] ^= 1;
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(damage(places[1]), DamageAt::Offset(places[1].start));
    }
}
