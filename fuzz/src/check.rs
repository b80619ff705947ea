//! Invariants of rendered output that hold for every input: a failed check panics,
//! which libFuzzer reports as a crash.

use memprompt::out::{Final, Out, Render, Section};
use memprompt::text::{char_len, Native};

/// The number of code points of `bytes` when they are UTF-8 with `surrogatepass` (what
/// Python can decode back into a `str`): no overlong forms, nothing above U+10FFFF,
/// surrogates allowed.
pub fn decode(bytes: &[u8]) -> Option<usize> {
    let mut count = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (len, min, init) = match b {
            0x00..=0x7f => (1, 0, u32::from(b)),
            0xc2..=0xdf => (2, 0x80, u32::from(b & 0x1f)),
            0xe0..=0xef => (3, 0x800, u32::from(b & 0x0f)),
            0xf0..=0xf4 => (4, 0x1_0000, u32::from(b & 0x07)),
            _ => return None,
        };
        let tail = bytes.get(i + 1..i + len)?;
        let mut cp = init;
        for &c in tail {
            if c & 0xc0 != 0x80 {
                return None;
            }
            cp = (cp << 6) | u32::from(c & 0x3f);
        }
        if cp < min || cp > 0x10_ffff {
            return None;
        }
        count += 1;
        i += len;
    }
    Some(count)
}

/// The text is valid surrogatepass UTF-8, and the core's own code-point counting agrees.
pub fn valid_text(bytes: &[u8]) {
    let Some(count) = decode(bytes) else {
        panic!("output is not surrogatepass UTF-8: {:?}", String::from_utf8_lossy(&bytes[..bytes.len().min(200)]));
    };
    assert_eq!(char_len(bytes), count, "char_len disagrees with the decoder");
}

fn is_boundary(bytes: &[u8], at: usize) -> bool {
    at == bytes.len() || bytes.get(at).is_some_and(|&b| b & 0xc0 != 0x80)
}

/// Every section lies inside the output, at code-point boundaries, from `<name>` to
/// `</name>`; sections come in order and do not overlap.
pub fn sections(out: &Out) {
    let buf = &out.buf;
    let mut last_end = 0;
    for s in &out.sections {
        assert!(s.start <= s.end && s.end <= buf.len(), "section {} out of bounds", s.name);
        assert!(s.start >= last_end, "section {} overlaps the one before", s.name);
        assert!(is_boundary(buf, s.start) && is_boundary(buf, s.end), "section {} not at a boundary", s.name);
        let text = &buf[s.start..s.end];
        let open = format!("<{}>", s.name);
        let close = format!("</{}>", s.name);
        assert!(text.starts_with(open.as_bytes()), "section {} does not start with its tag", s.name);
        assert!(text.ends_with(close.as_bytes()), "section {} does not end with its tag", s.name);
        last_end = s.end;
    }
}

/// A message's sections (code points) are in order, none empty, and tile `message` with only
/// `"\n\n"` separators between them and before the first; the last ends where it ends.
pub fn tiled(sections: &[Section], message: Native<'_>) {
    let mut at = 0;
    for s in sections {
        assert!(at <= s.start && s.start < s.end && s.end <= message.len(), "section {} out of order", s.name);
        let gap = message.slice(at, s.start);
        assert!(gap.len().is_multiple_of(2) && gap.count_newlines() == gap.len(), "text before section {}", s.name);
        at = s.end;
    }
    assert_eq!(at, message.len(), "text after the last section");
}

/// The final-width path (measured, allocated at its class's width, written in place, as the
/// binding builds a `str`) gives the same text as the UTF-8 sink, at the exact width class
/// CPython requires, with the same sections in code points.
pub fn final_width(r: &(impl Render + ?Sized), utf8: &Out) {
    let fin = Final::of(r).expect("what rendered once renders again");
    assert_eq!(fin.to_utf8(), utf8.buf, "the final-width output is the UTF-8 output");
    assert_eq!(fin.class, fin.exact_class(), "the counted class is the exact one");
    assert_eq!(
        fin.fingerprint(),
        memprompt::fingerprint::fingerprint(&utf8.buf),
        "the fingerprint of the final-width units"
    );
    assert_eq!(fin.sections.len(), utf8.sections.len());
    for (wide, bytes) in fin.sections.iter().zip(&utf8.sections) {
        assert_eq!(wide.name, bytes.name);
        assert_eq!(wide.start, char_len(&utf8.buf[..bytes.start]), "section {} start in code points", wide.name);
        assert_eq!(wide.end, char_len(&utf8.buf[..bytes.end]), "section {} end in code points", wide.name);
    }
}
