//! Fingerprints (XXH3-128 of the surrogatepass UTF-8 bytes) and the exact parse of a
//! stored system message, which together replace Letta's substring tests.

use std::cell::RefCell;

use twox_hash::XxHash3_128;

use crate::system_message::{parts, Part};
use crate::text::{Class, Native, Units};

/// Where the trailing metadata block starts inside the replaced text.
pub const METADATA_START: &[u8] = b"\n\n<memory_metadata>";

/// The UTF-8 encoded before it is hashed: a `str` whose UTF-8 fits is hashed in one call.
const SCRATCH_BYTES: usize = 16 * 1024;

thread_local! {
    /// One buffer a thread, zeroed once, not on each call.
    static SCRATCH: RefCell<Box<[u8]>> = RefCell::new(vec![0; SCRATCH_BYTES].into_boxed_slice());
}

/// XXH3-128 of `text`, as `xxhash.xxh3_128_intdigest(text.encode("utf-8", "surrogatepass"))`.
pub fn fingerprint(text: &[u8]) -> u128 {
    XxHash3_128::oneshot(text)
}

/// The same fingerprint of a `str` in its own width, encoded through a reused buffer: no
/// UTF-8 copy of the text is made, and text whose UTF-8 fits the buffer is hashed at once
/// rather than streamed.
pub fn fingerprint_native(text: Native<'_>) -> u128 {
    if let (Units::One(ascii), Class::Ascii) = (text.units, text.class) {
        // ASCII is its own UTF-8.
        return fingerprint(ascii);
    }
    SCRATCH.with_borrow_mut(|buf| {
        let mut streamed: Option<XxHash3_128> = None;
        let rest = text.utf8_chunks(buf, |full| streamed.get_or_insert_with(XxHash3_128::new).write(full));
        match streamed {
            None => fingerprint(&buf[..rest]),
            Some(mut xxh3) => {
                xxh3.write(&buf[..rest]);
                xxh3.finish_128()
            }
        }
    })
}

/// The text that replaced every `{CORE_MEMORY}` in `message`, if `message` was built from
/// `template` (with the placeholder appended when it has none): the template's text must
/// frame it and every occurrence must hold the same text.
pub fn replaced_text<'m>(template: &[u8], message: &'m [u8]) -> Option<&'m [u8]> {
    let parts = parts(template, true);
    let literal: usize = parts.iter().map(|p| if let Part::Template(t) = p { t.len() } else { 0 }).sum();
    let slots = parts.iter().filter(|p| matches!(p, Part::Memory)).count();
    let filled = message.len().checked_sub(literal)?;
    if slots == 0 || filled % slots != 0 {
        return None;
    }
    let width = filled / slots;
    let mut rest = message;
    let mut replaced: Option<&[u8]> = None;
    for part in parts {
        match part {
            Part::Template(text) => rest = rest.strip_prefix(text)?,
            Part::Memory => {
                let (text, after) = rest.split_at_checked(width)?;
                if replaced.is_some_and(|r| r != text) {
                    return None;
                }
                replaced = Some(text);
                rest = after;
            }
        }
    }
    replaced
}

/// The memory section of a stored message: the replaced text up to its last metadata block.
pub fn stored_memory_section<'m>(template: &[u8], message: &'m [u8]) -> Option<&'m [u8]> {
    let replaced = replaced_text(template, message)?;
    memchr::memmem::rfind(replaced, METADATA_START).map(|end| &replaced[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = "\n\n<memory_metadata>\n- AGENT_ID: a\n</memory_metadata>";

    #[test]
    fn fingerprint_is_xxh3_128() {
        // xxhash.xxh3_128_intdigest(b"") in Python.
        assert_eq!(fingerprint(b""), 0x99aa06d3014798d86001c324468d497f);
    }

    #[test]
    fn native_fingerprint_is_the_utf8_one() {
        let ascii = Native { units: Units::One(b"abc"), class: Class::Ascii };
        assert_eq!(fingerprint_native(ascii), fingerprint(b"abc"));
        // 7 bytes of UTF-8 for 3 units: 5,000 units are hashed at once, 30,000 streamed.
        for n in [5000, 30_000] {
            let wide: Vec<u32> = "\u{e9}\u{1F600}x".chars().map(u32::from).cycle().take(n).collect();
            let text: String = wide.iter().map(|&c| char::from_u32(c).unwrap()).collect();
            assert_eq!(
                fingerprint_native(Native { units: Units::Four(&wide), class: Class::Ucs4 }),
                fingerprint(text.as_bytes())
            );
        }
        // ASCII runs long and short around UCS-2 and Latin-1 code points, across chunk ends.
        let mixed: String =
            (0..3000).map(|i| ["x", "\u{2192}", "\u{e9}", &"y".repeat(i % 37)][i % 4].to_string()).collect();
        let units: Vec<u16> = mixed.chars().map(|c| c as u16).collect();
        assert_eq!(
            fingerprint_native(Native { units: Units::Two(&units), class: Class::Ucs2 }),
            fingerprint(mixed.as_bytes())
        );
        let surrogate = Native { units: Units::Two(&[0xD800]), class: Class::Ucs2 };
        assert_eq!(fingerprint_native(surrogate), fingerprint(&[0xED, 0xA0, 0x80]));
    }

    #[test]
    fn placeholder_appended_when_missing() {
        let msg = format!("You are X.\n\n<memory_blocks>m</memory_blocks>{META}");
        assert_eq!(
            stored_memory_section(b"You are X.", msg.as_bytes()),
            Some(&b"<memory_blocks>m</memory_blocks>"[..])
        );
        assert_eq!(stored_memory_section(b"You are Y.", msg.as_bytes()), None);
    }

    #[test]
    fn every_placeholder_must_hold_the_same_text() {
        let t = b"A{CORE_MEMORY}B{CORE_MEMORY}C";
        let same = format!("Am{META}Bm{META}C");
        assert_eq!(stored_memory_section(t, same.as_bytes()), Some(&b"m"[..]));
        let differ = format!("Am{META}Bn{META}C");
        assert_eq!(stored_memory_section(t, differ.as_bytes()), None);
    }

    #[test]
    fn memory_holding_a_fake_metadata_block() {
        let memory = "v\n\n<memory_metadata>\nfake\n</memory_metadata>";
        let msg = "S{CORE_MEMORY}E".replace("{CORE_MEMORY}", &format!("{memory}{META}"));
        assert_eq!(stored_memory_section(b"S{CORE_MEMORY}E", msg.as_bytes()), Some(memory.as_bytes()));
    }

    #[test]
    fn empty_memory_section() {
        let msg = format!("T\n\n{META}");
        assert_eq!(stored_memory_section(b"T", msg.as_bytes()), Some(&b""[..]));
    }
}
