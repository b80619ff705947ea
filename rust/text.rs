//! Python `str` semantics on text held as UTF-8 with `surrogatepass`.
//!
//! Every Python string crosses the boundary as the bytes of
//! `s.encode("utf-8", "surrogatepass")`: valid UTF-8, except that a lone
//! surrogate is the 3-byte sequence `ED A0..BF xx`. Byte order of such text is
//! code-point order, so `sorted()` is a byte sort.

/// Number of code points, as Python's `len(str)`.
pub fn char_len(s: &[u8]) -> usize {
    // Every byte starts a code point except continuation bytes (0b10xxxxxx). Counting
    // them in u8 lanes over 64-byte chunks lets the compiler vectorise the loop.
    let mut continuation = 0;
    let mut chunks = s.chunks_exact(64);
    for chunk in &mut chunks {
        continuation += chunk.iter().map(|&b| u8::from(b & 0xC0 == 0x80)).sum::<u8>() as usize;
    }
    continuation += chunks.remainder().iter().filter(|&&b| b & 0xC0 == 0x80).count();
    s.len() - continuation
}

/// The lines of `s`, as Python's `s.split("\n")`.
pub fn lines(s: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let text = rest?;
        match memchr::memchr(b'\n', text) {
            Some(at) => {
                rest = Some(&text[at + 1..]);
                Some(&text[..at])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

/// Code-point offsets of the given byte offsets (each at a code-point boundary), in one pass.
pub fn char_offsets(s: &[u8], byte_offsets: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..byte_offsets.len()).collect();
    order.sort_by_key(|&i| byte_offsets[i]);
    let mut result = vec![0; byte_offsets.len()];
    let (mut at, mut chars) = (0, 0);
    for i in order {
        let to = byte_offsets[i].min(s.len()).max(at);
        chars += char_len(&s[at..to]);
        at = to;
        result[i] = chars;
    }
    result
}

/// True for every code point for which Python's `str.isspace()` is true.
pub fn is_py_space(cp: u32) -> bool {
    matches!(
        cp,
        0x09..=0x0D
            | 0x1C..=0x20
            | 0x85
            | 0xA0
            | 0x1680
            | 0x2000..=0x200A
            | 0x2028
            | 0x2029
            | 0x202F
            | 0x205F
            | 0x3000
    )
}

/// The code point that starts at `s[0]` and its length in bytes.
fn decode_first(s: &[u8]) -> (u32, usize) {
    let b0 = s[0] as u32;
    let cont = |i: usize| (s[i] & 0x3F) as u32;
    match b0 {
        0x00..=0x7F => (b0, 1),
        0xC0..=0xDF => (((b0 & 0x1F) << 6) | cont(1), 2),
        0xE0..=0xEF => (((b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3),
        _ => (((b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3), 4),
    }
}

/// The code point that ends at the end of `s` and its length in bytes.
fn decode_last(s: &[u8]) -> (u32, usize) {
    let mut start = s.len() - 1;
    while start > 0 && (s[start] as i8) < -0x40 {
        start -= 1;
    }
    decode_first(&s[start..])
}

/// Python's `str.strip()` with no argument.
pub fn strip(s: &[u8]) -> &[u8] {
    let mut s = s;
    while !s.is_empty() {
        let (cp, n) = decode_first(s);
        if !is_py_space(cp) {
            break;
        }
        s = &s[n..];
    }
    while !s.is_empty() {
        let (cp, n) = decode_last(s);
        if !is_py_space(cp) {
            break;
        }
        s = &s[..s.len() - n];
    }
    s
}

/// Python's `str.rstrip("\n")`.
pub fn rstrip_newlines(s: &[u8]) -> &[u8] {
    let end = s.iter().rposition(|&b| b != b'\n').map_or(0, |i| i + 1);
    &s[..end]
}

/// Python's `s.strip().split("\n")[0].strip()`: the first line of a description.
pub fn first_line(s: &[u8]) -> &[u8] {
    let s = strip(s);
    let line = s.split(|&b| b == b'\n').next().unwrap_or(s);
    strip(line)
}

/// Python's `[p for p in s.split("/") if p]`: the non-empty path parts.
pub fn path_parts(s: &[u8]) -> impl DoubleEndedIterator<Item = &[u8]> {
    s.split(|&b| b == b'/').filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(s: &str) -> Vec<u8> {
        s.as_bytes().to_vec()
    }

    #[test]
    fn len_counts_code_points() {
        assert_eq!(char_len("a\u{e9}\u{1F600}".as_bytes()), 3);
        // A lone surrogate, as surrogatepass encodes it, is one code point.
        assert_eq!(char_len(&[b'a', 0xED, 0xA0, 0x80]), 2);
    }

    #[test]
    fn offsets_in_code_points() {
        let s = "a\u{e9}b\u{1F600}c".as_bytes();
        assert_eq!(char_offsets(s, &[s.len(), 0, 3, 8]), vec![5, 0, 2, 4]);
    }

    #[test]
    fn lines_split_like_python() {
        assert_eq!(lines(b"a\n\nb\n").collect::<Vec<_>>(), vec![&b"a"[..], b"", b"b", b""]);
        assert_eq!(lines(b"").collect::<Vec<_>>(), vec![&b""[..]]);
    }

    #[test]
    fn strip_uses_python_whitespace() {
        assert_eq!(strip(&py("\u{1c}\u{85} x \u{3000}\u{1f}")), b"x");
        // U+200B is not whitespace in Python (nor U+180E).
        assert_eq!(strip(&py("\u{200b}x")), "\u{200b}x".as_bytes());
        assert_eq!(strip(&py(" \t\n ")), b"");
    }

    #[test]
    fn rstrip_newlines_only() {
        assert_eq!(rstrip_newlines(b"a \n\n"), b"a ");
        assert_eq!(rstrip_newlines(b"\n\n"), b"");
        assert_eq!(rstrip_newlines(b"a\r\n"), b"a\r");
    }

    #[test]
    fn first_line_of_description() {
        assert_eq!(first_line(b"  \n one \n two"), b"one");
        assert_eq!(first_line(b""), b"");
    }

    #[test]
    fn path_parts_drop_empty() {
        let parts: Vec<&[u8]> = path_parts(b"/a//b/").collect();
        assert_eq!(parts, vec![&b"a"[..], &b"b"[..]]);
    }
}
