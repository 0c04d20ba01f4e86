//! The rns an acknowledgement of a register behind its box journals with the missing
//! numbers (docs/design.md, "A register behind its box"): never certified again for that
//! device's organizations.

use super::AdminError;
use crate::model::{AnomalyRecord, FiscalAnomalyKind, LostInvoice};
use crate::msg;

/// The lost rns of `record`'s acknowledgement: the one its C1h named, and `given` (number,
/// rn) by the administrator. A number that is not missing, an empty rn, or another rn for a
/// number already named (by C1h or before) is refused.
pub(super) fn of(
    record: &AnomalyRecord,
    given: &[(u64, String)],
) -> Result<Vec<LostInvoice>, AdminError> {
    let anomaly = &record.anomaly;
    if anomaly.kind != FiscalAnomalyKind::RegisterBehind {
        if given.is_empty() {
            return Ok(Vec::new());
        }
        return Err(AdminError::Invalid(msg!("admin-ack-no-numbers-here")));
    }
    let mut lost: Vec<LostInvoice> = anomaly.last.iter().cloned().collect();
    for (number, rn) in given {
        let rn = rn.trim();
        if rn.is_empty() || !anomaly.missing.contains(number) {
            return Err(AdminError::Invalid(msg!(
                "admin-ack-rn-not-missing",
                number = *number,
                rn = rn,
                missing = crate::model::numbers_text(&anomaly.missing)
            )));
        }
        match lost.iter().find(|l| l.number == *number) {
            Some(known) if known.rn == rn => {}
            Some(known) => {
                return Err(AdminError::Invalid(msg!(
                    "admin-ack-rn-differs",
                    number = *number,
                    rn = rn,
                    known = known.rn.as_str()
                )))
            }
            None => lost.push(LostInvoice {
                number: *number,
                rn: rn.to_owned(),
                code_def: String::new(),
                invoice_type: String::new(),
                at: None,
            }),
        }
    }
    lost.sort_by_key(|l| l.number);
    Ok(lost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BoxCounters, FiscalAnomaly};

    fn behind(last: Option<&str>) -> AnomalyRecord {
        AnomalyRecord {
            id: 9,
            detected_at: chrono::Utc::now(),
            anomaly: FiscalAnomaly {
                device: "shop".into(),
                nim: "NIM1".into(),
                kind: FiscalAnomalyKind::RegisterBehind,
                known: BoxCounters {
                    nim: "NIM1".into(),
                    nif: "NIF".into(),
                    tc: 2,
                    sequence: 2,
                    highest_tc: 0,
                },
                seen_nif: "NIF".into(),
                seen_tc: 4,
                seen_in: "C1h".into(),
                missing: vec![3, 4],
                last: last.map(|rn| LostInvoice {
                    number: 4,
                    rn: rn.into(),
                    code_def: "DEF".into(),
                    invoice_type: "FV".into(),
                    at: None,
                }),
            },
            acknowledged: None,
        }
    }

    #[test]
    fn the_rn_of_c1h_and_the_given_ones_are_kept_by_number() {
        let record = behind(Some("RB-4"));
        let lost = of(&record, &[(3, "RB-3".into())]).unwrap();
        let rns: Vec<_> = lost.iter().map(|l| (l.number, l.rn.as_str())).collect();
        assert_eq!(rns, [(3, "RB-3"), (4, "RB-4")]);
        assert_eq!(lost[1].code_def, "DEF", "what C1h said is kept");
        assert_eq!(of(&record, &[(4, "RB-4".into())]).unwrap().len(), 2 - 1);
        assert!(
            of(&record, &[(4, "OTHER".into())]).is_err(),
            "C1h's rn wins"
        );
        assert!(of(&record, &[(5, "RB-5".into())]).is_err(), "not missing");
        assert!(of(&record, &[(3, " ".into())]).is_err(), "empty rn");
        assert!(of(&behind(None), &[]).unwrap().is_empty());
    }
}
