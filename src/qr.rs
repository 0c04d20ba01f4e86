//! The QR code of a certification, drawn from its `qrCode` string: as SVG for ERPs that cannot
//! draw one (`GET /api/v1/Invoice/{rn}/qr.svg`) and for the dashboard; as a compact inline SVG
//! for the printable fiscal block (`receipt`); as a grayscale PNG (`qr.png`), encoded with the
//! small `png` crate from the module matrix (no image library).
//!
//! Every drawing uses error correction M and a quiet zone of [`QUIET_ZONE`] modules.

use qrcode::render::svg;
use qrcode::{Color, EcLevel, QrCode};

/// Why a QR code could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("the text cannot be drawn as a QR code: {0}")]
pub struct QrError(String);

/// The quiet zone around the code, in modules (ISO/IEC 18004 asks for 4).
pub const QUIET_ZONE: usize = 4;

/// The PNG's size the default scale aims at, in pixels.
pub const PNG_TARGET_PIXELS: usize = 300;

/// The scales a PNG may be asked for (pixels per module).
pub const PNG_SCALES: std::ops::RangeInclusive<u32> = 1..=40;

/// An SVG image of `text` as a QR code (error correction M, quiet zone included).
pub fn svg_of(text: &str) -> Result<String, QrError> {
    let code = code_of(text)?;
    Ok(code
        .render::<svg::Color<'_>>()
        .min_dimensions(200, 200)
        .quiet_zone(true)
        .build())
}

/// The module matrix of a QR code: `width` x `width` modules, dark or light, quiet zone not
/// included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Modules {
    width: usize,
    dark: Vec<bool>,
}

impl Modules {
    /// The modules of `text` (error correction M).
    pub fn of(text: &str) -> Result<Modules, QrError> {
        let code = code_of(text)?;
        let dark = code
            .to_colors()
            .into_iter()
            .map(|c| c == Color::Dark)
            .collect();
        Ok(Modules {
            width: code.width(),
            dark,
        })
    }

    /// Modules a side, quiet zone not included.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Whether the module at column `x`, row `y` is dark (outside the matrix: light).
    pub fn is_dark(&self, x: usize, y: usize) -> bool {
        x < self.width && y < self.width && self.dark[y * self.width + x]
    }

    /// Modules a side with the quiet zone on both sides.
    pub fn side(&self) -> usize {
        self.width + 2 * QUIET_ZONE
    }

    /// The scale of a PNG of about [`PNG_TARGET_PIXELS`] a side (at least 1).
    pub fn default_scale(&self) -> u32 {
        let side = self.side();
        u32::try_from(((PNG_TARGET_PIXELS + side / 2) / side).max(1)).unwrap_or(1)
    }
}

/// A compact SVG of `text` for inline use in HTML: no XML prolog, one path, a `viewBox` in
/// modules (quiet zone included) and no size: the page's CSS gives it one. `label` is its
/// accessible name (escaped here).
pub fn inline_svg(text: &str, label: &str) -> Result<String, QrError> {
    let modules = Modules::of(text)?;
    let side = modules.side();
    let mut path = String::with_capacity(modules.width * modules.width * 4);
    for y in 0..modules.width {
        let mut x = 0;
        while x < modules.width {
            if !modules.is_dark(x, y) {
                x += 1;
                continue;
            }
            let start = x;
            while x < modules.width && modules.is_dark(x, y) {
                x += 1;
            }
            path.push_str(&format!(
                "M{} {}h{}v1h-{}z",
                start + QUIET_ZONE,
                y + QUIET_ZONE,
                x - start,
                x - start
            ));
        }
    }
    Ok(format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {side} {side}\" \
         shape-rendering=\"crispEdges\" role=\"img\" aria-label=\"{}\">\
         <rect width=\"{side}\" height=\"{side}\" fill=\"#fff\"/>\
         <path fill=\"#000\" d=\"{path}\"/></svg>",
        crate::markup::escape(label)
    ))
}

/// A PNG of `text` as a QR code: 1-bit grayscale, `scale` pixels a module (default: about
/// [`PNG_TARGET_PIXELS`] a side), quiet zone of [`QUIET_ZONE`] modules, black on white.
/// A scale outside [`PNG_SCALES`] is an error.
pub fn png_of(text: &str, scale: Option<u32>) -> Result<Vec<u8>, QrError> {
    let modules = Modules::of(text)?;
    let scale = scale.unwrap_or_else(|| modules.default_scale());
    if !PNG_SCALES.contains(&scale) {
        return Err(QrError(format!("scale {scale} is out of {PNG_SCALES:?}")));
    }
    let scale = scale as usize;
    let pixels = modules.side() * scale;
    // One bit a pixel, 1 = white (grayscale), rows padded to a byte.
    let row_bytes = pixels.div_ceil(8);
    let mut data = vec![0u8; row_bytes * pixels];
    for py in 0..pixels {
        let my = (py / scale).checked_sub(QUIET_ZONE);
        for px in 0..pixels {
            let mx = (px / scale).checked_sub(QUIET_ZONE);
            let dark = matches!((mx, my), (Some(x), Some(y)) if modules.is_dark(x, y));
            if !dark {
                data[py * row_bytes + px / 8] |= 0x80 >> (px % 8);
            }
        }
    }
    let side = u32::try_from(pixels).map_err(|e| QrError(e.to_string()))?;
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, side, side);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::One);
    let mut writer = encoder
        .write_header()
        .map_err(|e| QrError(format!("PNG header: {e}")))?;
    writer
        .write_image_data(&data)
        .map_err(|e| QrError(format!("PNG data: {e}")))?;
    writer
        .finish()
        .map_err(|e| QrError(format!("PNG end: {e}")))?;
    Ok(out)
}

fn code_of(text: &str) -> Result<QrCode, QrError> {
    QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M)
        .map_err(|e| QrError(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "RDCDEF01;SIM0000001;5S4V3SVZA3Q5BSUPADEBK4HR;A1234567B;20261122012303";

    #[test]
    fn a_security_string_is_drawn_as_svg() {
        let image = svg_of(TEXT).expect("drawn");
        assert!(
            image.starts_with("<?xml") || image.starts_with("<svg"),
            "{image}"
        );
        assert!(image.contains("<svg") && image.contains("</svg>"));
        // A different text draws a different image.
        assert_ne!(image, svg_of("RDCDEF01;OTHER").expect("drawn"));
    }

    /// The PNG's pixels, decoded: (side, one byte a pixel, 0 black, 255 white).
    fn decoded(png_bytes: &[u8]) -> (u32, Vec<u8>) {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
        decoder.set_transformations(png::Transformations::EXPAND);
        let mut reader = decoder.read_info().expect("a PNG");
        let mut buffer = vec![0; reader.output_buffer_size().expect("size")];
        let info = reader.next_frame(&mut buffer).expect("a frame");
        assert_eq!(info.width, info.height, "square");
        assert_eq!(info.color_type, png::ColorType::Grayscale);
        buffer.truncate(info.buffer_size());
        (info.width, buffer)
    }

    #[test]
    fn the_png_has_the_modules_the_quiet_zone_and_about_300_pixels() {
        let modules = Modules::of(TEXT).expect("modules");
        let bytes = png_of(TEXT, None).expect("png");
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
        let (side, pixels) = decoded(&bytes);
        let scale = modules.default_scale() as usize;
        assert_eq!(side as usize, modules.side() * scale);
        assert!((250..=350).contains(&side), "{side} px");
        for y in 0..side as usize {
            for x in 0..side as usize {
                let (mx, my) = (x / scale, y / scale);
                let dark = mx >= QUIET_ZONE
                    && my >= QUIET_ZONE
                    && modules.is_dark(mx - QUIET_ZONE, my - QUIET_ZONE);
                let want = if dark { 0 } else { 255 };
                assert_eq!(pixels[y * side as usize + x], want, "pixel {x},{y}");
            }
        }
        let (small, _) = decoded(&png_of(TEXT, Some(1)).expect("png"));
        assert_eq!(small as usize, modules.side());
        assert!(png_of(TEXT, Some(0)).is_err());
        assert!(png_of(TEXT, Some(41)).is_err());
    }

    #[test]
    fn the_inline_svg_is_one_path_in_modules() {
        let modules = Modules::of(TEXT).expect("modules");
        let svg = inline_svg(TEXT, "QR \"x\"").expect("svg");
        let side = modules.side();
        assert!(svg.starts_with("<svg "), "{svg}");
        assert!(svg.contains(&format!("viewBox=\"0 0 {side} {side}\"")));
        assert!(svg.contains("aria-label=\"QR &quot;x&quot;\""));
        assert_eq!(svg.matches("<path").count(), 1);
        // The top-left finder pattern's first row: 7 dark modules from the quiet zone.
        assert!(svg.contains("d=\"M4 4h7v1h-7z"), "{svg}");
    }
}
