//! The CSV export of a register, one format for `emcf-gateway log export --format csv` and
//! the dashboard's download.
//! Values are written as stored (a fiscal register is not rewritten), quoted per RFC 4180
//! where needed.

use crate::model::RegisterEntry;

/// The header line.
pub const HEADER: &str = "sequence,environment,org,nif,isf,rn,type,total,vat,codeDEFDGI,counters,nim,qrCode,deviceDateTime,receivedAt,certifiedAt,keyId,requestDigest,source";

/// One entry as a CSV line (without the line end).
pub fn row(e: &RegisterEntry) -> String {
    let millis =
        |t: &chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let fields = [
        e.sequence.to_string(),
        e.request.environment.as_str().to_string(),
        e.request.org.clone(),
        e.request.nif.clone(),
        e.request.isf.clone(),
        e.request.rn.clone(),
        e.request.invoice_type.clone(),
        e.request.totals.total.to_string(),
        e.request.totals.vat.to_string(),
        e.security.code_def.clone(),
        e.security.counters.clone(),
        e.security.nim.clone(),
        e.security.qr_code.clone(),
        e.security.date_time.format("%Y-%m-%dT%H:%M:%S").to_string(),
        millis(&e.request.received_at),
        millis(&e.certified_at),
        e.request.key_id.clone(),
        e.request.request_digest.clone(),
        e.source.clone(),
    ];
    fields
        .iter()
        .map(|f| field(f))
        .collect::<Vec<_>>()
        .join(",")
}

fn field(value: &str) -> String {
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::{certified_entry, intent};

    #[test]
    fn rows_have_the_header_s_columns_and_quote_when_needed() {
        let entry = certified_entry(3, 9, intent("demo", "F,\"1\""));
        let line = row(&entry);
        assert!(line.starts_with("3,production,demo,NIF-demo,ISF-demo,\"F,\"\"1\"\"\",FV,116.00,"));
        assert!(
            line.ends_with(",live-demo,") || line.contains(",live-demo,"),
            "{line}"
        );
        assert_eq!(HEADER.split(',').count(), 19);
        assert_eq!(field("plain"), "plain");
    }
}
