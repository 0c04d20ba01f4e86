//! The QR code of a certification, drawn from its `qrCode` string as SVG: for ERPs that cannot
//! draw one (`GET /api/v1/Invoice/{rn}/qr.svg`) and for the dashboard.

use qrcode::render::svg;
use qrcode::{EcLevel, QrCode};

/// Why a QR code could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("the text cannot be drawn as a QR code: {0}")]
pub struct QrError(String);

/// An SVG image of `text` as a QR code (error correction M, quiet zone included).
pub fn svg_of(text: &str) -> Result<String, QrError> {
    let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M)
        .map_err(|e| QrError(e.to_string()))?;
    Ok(code
        .render::<svg::Color<'_>>()
        .min_dimensions(200, 200)
        .quiet_zone(true)
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_security_string_is_drawn_as_svg() {
        let text = "RDCDEF01;SIM0000001;5S4V3SVZA3Q5BSUPADEBK4HR;A1234567B;20261122012303";
        let image = svg_of(text).expect("drawn");
        assert!(
            image.starts_with("<?xml") || image.starts_with("<svg"),
            "{image}"
        );
        assert!(image.contains("<svg") && image.contains("</svg>"));
        // A different text draws a different image.
        assert_ne!(image, svg_of("RDCDEF01;OTHER").expect("drawn"));
    }
}
