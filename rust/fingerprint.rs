//! Fingerprints (XXH3-128 of the surrogatepass UTF-8 bytes) and the exact parse of a
//! stored system message, which together replace Letta's substring tests.

use std::cell::RefCell;
use std::ops::Range;

use twox_hash::XxHash3_128;

use crate::model::Chars;
use crate::system_message::{parts, Part, TemplateText};
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

/// A part of a stored message parsed against its template, and where it lies (code points).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placed {
    /// The template's own text.
    Template(Range<usize>),
    /// The `"\n\n"` before a memory appended to a template that has no placeholder.
    Appended(Range<usize>),
    /// What replaced a `{CORE_MEMORY}`: the memory section, `"\n\n"`, the metadata block.
    Memory(Range<usize>),
}

/// Where each part of `template` is in `message`, in order, handed to `each`, if `message`
/// was built from `template` (with the placeholder appended when it has none): the
/// template's text must frame the memory and every occurrence must hold the same text.
/// `None` (after any number of parts were handed on) when it was not. Both are read in
/// their own width.
pub fn place(template: Native<'_>, message: Native<'_>, mut each: impl FnMut(Placed)) -> Option<()> {
    let parts = parts(Chars::Native(template), true);
    let literal: usize = parts.iter().map(|p| if let Part::Template(t) = p { t.units() } else { 0 }).sum();
    let slots = parts.iter().filter(|p| matches!(p, Part::Memory)).count();
    let filled = message.len().checked_sub(literal)?;
    if slots == 0 || filled % slots != 0 {
        return None;
    }
    let width = filled / slots;
    let (mut at, mut first): (usize, Option<Range<usize>>) = (0, None);
    for part in parts {
        let len = match part {
            Part::Template(literal) => literal.units(),
            Part::Memory => width,
        };
        let end = at.checked_add(len).filter(|&end| end <= message.len())?;
        let text = message.slice(at, end);
        match part {
            Part::Template(Chars::Native(literal)) if !text.same_text(literal) => return None,
            Part::Template(Chars::Native(_)) => each(Placed::Template(at..end)),
            // `parts` gives UTF-8 only for the "\n\n" before an appended placeholder.
            Part::Template(Chars::Utf8(literal)) if !(literal.is_ascii() && text.starts_with_ascii(literal)) => {
                return None
            }
            Part::Template(Chars::Utf8(_)) => each(Placed::Appended(at..end)),
            Part::Memory => {
                match &first {
                    Some(first) if !message.slice(first.start, first.end).same_text(text) => return None,
                    Some(_) => {}
                    None => first = Some(at..end),
                }
                each(Placed::Memory(at..end));
            }
        }
        at = end;
    }
    Some(())
}

/// Where the text that replaced every `{CORE_MEMORY}` in `message` is (its first
/// occurrence, in code points), if `message` was built from `template` (see `place`).
pub fn replaced_text(template: Native<'_>, message: Native<'_>) -> Option<Range<usize>> {
    let mut replaced = None;
    place(template, message, |placed| {
        if let (Placed::Memory(range), None) = (placed, &replaced) {
            replaced = Some(range);
        }
    })?;
    replaced
}

/// Where the memory section of a stored message is (in code points): the replaced text
/// up to its last metadata block.
pub fn stored_memory_section(template: Native<'_>, message: Native<'_>) -> Option<Range<usize>> {
    let replaced = replaced_text(template, message)?;
    let end = message.slice(replaced.start, replaced.end).rfind_ascii(METADATA_START)?;
    Some(replaced.start..replaced.start + end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::out::Final;

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

    /// `stored_memory_section` of a template and a message held as Python holds them (each
    /// in its own width): the section, as a `String`.
    fn section(template: &str, message: &str) -> Option<String> {
        let (held_template, held) = (Final::of(template.as_bytes()).unwrap(), Final::of(message.as_bytes()).unwrap());
        let found = stored_memory_section(held_template.native(), held.native())?;
        Some(message.chars().skip(found.start).take(found.len()).collect())
    }

    #[test]
    fn placeholder_appended_when_missing() {
        let msg = format!("You are X.\n\n<memory_blocks>m</memory_blocks>{META}");
        assert_eq!(section("You are X.", &msg).as_deref(), Some("<memory_blocks>m</memory_blocks>"));
        assert_eq!(section("You are Y.", &msg), None);
    }

    #[test]
    fn every_placeholder_must_hold_the_same_text() {
        let t = "A{CORE_MEMORY}B{CORE_MEMORY}C";
        assert_eq!(section(t, &format!("Am{META}Bm{META}C")).as_deref(), Some("m"));
        assert_eq!(section(t, &format!("Am{META}Bn{META}C")), None);
    }

    #[test]
    fn memory_holding_a_fake_metadata_block() {
        let memory = "v\n\n<memory_metadata>\nfake\n</memory_metadata>";
        let msg = "S{CORE_MEMORY}E".replace("{CORE_MEMORY}", &format!("{memory}{META}"));
        assert_eq!(section("S{CORE_MEMORY}E", &msg).as_deref(), Some(memory));
    }

    #[test]
    fn empty_memory_section() {
        assert_eq!(section("T", &format!("T\n\n{META}")).as_deref(), Some(""));
    }

    #[test]
    fn template_message_and_section_of_different_widths() {
        // A message is as wide as its widest part: the template's text, the memory's or the
        // metadata's; the section found has the class of what it holds.
        for (template, memory, meta) in [
            ("You are X.", "<m>a\u{2192}b</m>", META),
            ("You are X.", "<m>ab</m>", "\n\n<memory_metadata>\u{1F600}</memory_metadata>"),
            ("\u{e9}{CORE_MEMORY}\u{1F600}", "<m>\u{2192}</m>", META),
            ("\u{2192}{CORE_MEMORY}x{CORE_MEMORY}", "<m>\u{e9}</m>", META),
            ("\u{1F600}", "", META),
        ] {
            let filled = format!("{memory}{meta}");
            let message = match template.contains("{CORE_MEMORY}") {
                true => template.replace("{CORE_MEMORY}", &filled),
                false => format!("{template}\n\n{filled}"),
            };
            assert_eq!(section(template, &message).as_deref(), Some(memory), "{template:?} {memory:?}");
            // A code point more in the template's text, of any width: not this template's message.
            for more in ["x", "\u{e9}", "\u{2192}", "\u{1F600}"] {
                assert_eq!(section(&format!("{template}{more}"), &message), None, "{template:?}{more:?}");
            }
        }
    }
}
