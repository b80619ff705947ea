//! Fingerprints (XXH3-128 of the surrogatepass UTF-8 bytes) and the exact parse of a
//! stored system message, which together replace Letta's substring tests.

use xxhash_rust::xxh3::xxh3_128;

/// The placeholder Letta replaces with the memory section and metadata block.
pub const PLACEHOLDER: &[u8] = b"{CORE_MEMORY}";

/// Where the trailing metadata block starts inside the replaced text.
pub const METADATA_START: &[u8] = b"\n\n<memory_metadata>";

/// XXH3-128 of `text`, as `xxhash.xxh3_128_intdigest(text.encode("utf-8", "surrogatepass"))`.
pub fn fingerprint(text: &[u8]) -> u128 {
    xxh3_128(text)
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    memchr::memmem::find(haystack.get(from..)?, needle).map(|i| i + from)
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::rfind(haystack, needle)
}

/// The literal pieces of `template` around each `{CORE_MEMORY}` (Python's `str.split`), and
/// the separator Letta puts before the placeholder it appends when the template has none.
fn template_pieces(template: &[u8]) -> (Vec<&[u8]>, &'static [u8]) {
    let mut pieces = Vec::new();
    let mut start = 0;
    while let Some(at) = find(template, PLACEHOLDER, start) {
        pieces.push(&template[start..at]);
        start = at + PLACEHOLDER.len();
    }
    pieces.push(&template[start..]);
    if pieces.len() == 1 {
        pieces.push(b"");
        return (pieces, b"\n\n");
    }
    (pieces, b"")
}

/// The text that replaced every `{CORE_MEMORY}` in `message`, if `message` was built from
/// `template`: the pieces must frame it and every occurrence must hold the same text.
pub fn replaced_text<'m>(template: &[u8], message: &'m [u8]) -> Option<&'m [u8]> {
    let (pieces, separator) = template_pieces(template);
    let literal: usize = pieces.iter().map(|p| p.len()).sum::<usize>() + separator.len();
    let slots = pieces.len() - 1;
    let filled = message.len().checked_sub(literal)?;
    if filled % slots != 0 {
        return None;
    }
    let width = filled / slots;
    let mut rest = message;
    let mut replaced: Option<&[u8]> = None;
    for (i, piece) in pieces.iter().enumerate() {
        rest = rest.strip_prefix(*piece)?;
        if i == 0 {
            rest = rest.strip_prefix(separator)?;
        }
        if i + 1 < pieces.len() {
            let (text, after) = rest.split_at_checked(width)?;
            if replaced.is_some_and(|r| r != text) {
                return None;
            }
            replaced = Some(text);
            rest = after;
        }
    }
    replaced
}

/// The memory section of a stored message: the replaced text up to its last metadata block.
pub fn stored_memory_section<'m>(template: &[u8], message: &'m [u8]) -> Option<&'m [u8]> {
    let replaced = replaced_text(template, message)?;
    rfind(replaced, METADATA_START).map(|end| &replaced[..end])
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
