//! The whole system message: the template with the memory put in place of
//! `{CORE_MEMORY}`, and Letta's `safe_format` for templates with variables.

use std::borrow::Cow;
use std::sync::LazyLock;

use crate::error::RenderResult;
use crate::model::Chars;
use crate::out::{Out, Render, Sink};
use crate::w;

/// Where the memory goes in a template.
pub const PLACEHOLDER: &[u8] = b"{CORE_MEMORY}";

/// The search for `PLACEHOLDER`, built once (building one costs more than a short search).
fn placeholder() -> &'static memchr::memmem::Finder<'static> {
    static FINDER: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(PLACEHOLDER));
    &FINDER
}

/// The start of every occurrence of `needle` in `hay`, left to right, not overlapping
/// (the occurrences `str.replace` and `str.split` find). `needle` must not be empty.
pub fn occurrences<'h>(hay: &'h [u8], needle: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
    let finder = memchr::memmem::Finder::new(needle);
    let mut from = 0;
    std::iter::from_fn(move || {
        if needle.is_empty() {
            return None;
        }
        let start = from + finder.find(hay.get(from..)?)?;
        from = start + needle.len();
        Some(start)
    })
}

/// Python's `hay.replace(needle, with)` (`needle` not empty), written into `out`.
fn replace_into(out: &mut impl Sink, hay: &[u8], needle: &[u8], with: &[u8]) {
    let mut copied = 0;
    for start in occurrences(hay, needle) {
        out.push(&hay[copied..start]);
        out.push(with);
        copied = start + needle.len();
    }
    out.push(&hay[copied..]);
}

/// A template's text as `parts` splits it: UTF-8 (a stored message's), or a Python `str`
/// in its own width (the template a system message is rendered from).
pub trait TemplateText: Copy {
    /// `"\n\n"`.
    const BETWEEN: Self;
    /// Where `PLACEHOLDER` first occurs at or after `from`, in the text's own units.
    fn find_placeholder(self, from: usize) -> Option<usize>;
    /// How many units it has.
    fn units(self) -> usize;
    /// Units `start..end`.
    fn slice(self, start: usize, end: usize) -> Self;
}

impl TemplateText for &[u8] {
    const BETWEEN: Self = b"\n\n";

    fn find_placeholder(self, from: usize) -> Option<usize> {
        placeholder().find(self.get(from..)?).map(|i| from + i)
    }

    fn units(self) -> usize {
        self.len()
    }

    fn slice(self, start: usize, end: usize) -> Self {
        self.get(start..end).unwrap_or_default()
    }
}

impl TemplateText for Chars<'_> {
    const BETWEEN: Self = Chars::Utf8(b"\n\n");

    fn find_placeholder(self, from: usize) -> Option<usize> {
        match self {
            Chars::Utf8(utf8) => utf8.find_placeholder(from),
            Chars::Native(native) => native.find_ascii(placeholder(), from),
        }
    }

    fn units(self) -> usize {
        match self {
            Chars::Utf8(utf8) => utf8.len(),
            Chars::Native(native) => native.len(),
        }
    }

    fn slice(self, start: usize, end: usize) -> Self {
        match self {
            Chars::Utf8(utf8) => Chars::Utf8(utf8.slice(start, end)),
            Chars::Native(native) => Chars::Native(native.slice(start, end)),
        }
    }
}

/// A part of the system message, in order.
#[derive(Debug, Clone, Copy)]
pub enum Part<T> {
    /// Text of the template (or the `"\n\n"` before an appended memory).
    Template(T),
    /// The memory section, `"\n\n"`, then the metadata block.
    Memory,
}

/// Letta's `get_system_message_from_compiled_memory` for an f-string template with no
/// user variables, as parts: the memory (with the metadata block) takes the place of
/// every `{CORE_MEMORY}`; when there is none, it is appended after `"\n\n"` if
/// `append_if_missing`.
pub fn parts<T: TemplateText>(system_prompt: T, append_if_missing: bool) -> Vec<Part<T>> {
    let mut parts = Vec::new();
    let mut copied = 0;
    while let Some(start) = system_prompt.find_placeholder(copied) {
        parts.push(Part::Template(system_prompt.slice(copied, start)));
        parts.push(Part::Memory);
        copied = start + PLACEHOLDER.len();
    }
    parts.push(Part::Template(system_prompt.slice(copied, system_prompt.units())));
    if parts.len() == 1 && append_if_missing {
        parts.extend([Part::Template(T::BETWEEN), Part::Memory]);
    }
    parts
}

/// The whole system message (see `parts`): the memory, `"\n\n"` and the metadata block
/// in place of each `{CORE_MEMORY}`. Both are rendered text (a `str` in Python): a million
/// placeholders are counted without rendering the block a million times.
pub struct SystemMessage<'a> {
    /// The template split at its placeholders, once for both passes of a render.
    parts: Vec<Part<Chars<'a>>>,
    memory: Chars<'a>,
    /// The `<memory_metadata>` block (see `metadata::render`).
    metadata: Chars<'a>,
}

impl<'a> SystemMessage<'a> {
    pub fn new(template: Chars<'a>, memory: Chars<'a>, metadata: Chars<'a>, append_if_missing: bool) -> Self {
        SystemMessage { parts: parts(template, append_if_missing), memory, metadata }
    }
}

impl Render for SystemMessage<'_> {
    fn render(&self, out: &mut impl Sink) -> RenderResult {
        for &part in &self.parts {
            match part {
                Part::Template(text) => w!(out, text),
                Part::Memory => w!(out, self.memory, "\n\n", self.metadata),
            }
        }
        Ok(())
    }
}

/// A piece of a parsed `format_map` template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'t> {
    Literal(&'t [u8]),
    /// A replacement field `{key}`: the value of `key` in the mapping.
    Field(&'t [u8]),
}

/// Letta's first step of `safe_format`: `template.replace("{}", "{{}}")`.
pub fn escape_empty_fields(template: &[u8]) -> Cow<'_, [u8]> {
    if occurrences(template, b"{}").next().is_none() {
        return Cow::Borrowed(template);
    }
    let mut out = Out::with_capacity(template.len() + 8);
    replace_into(&mut out, template, b"{}", b"{{}}");
    Cow::Owned(out.buf)
}

/// True when `str.format` would read `key` as an argument's name, not as a position,
/// an attribute, an index, a conversion or a format spec: it holds no `{}[].!:` and at
/// least one ASCII character that is not a digit (so it is not an integer, in any script).
fn is_plain_key(key: &[u8]) -> bool {
    key.iter().all(|b| !b"{}[].!:".contains(b)) && key.iter().any(|b| b.is_ascii() && !b.is_ascii_digit())
}

/// Parses a template for `str.format_map` when it uses only the common grammar:
/// literal text, `{{` and `}}`, and fields `{key}` with a plain key (see `is_plain_key`).
/// `None` for anything else (an error, a positional field, `!r`, `:spec`, `a.b`, `a[0]`):
/// the caller then lets Python's own `format_map` decide.
pub fn parse_simple(template: &[u8]) -> Option<Vec<Piece<'_>>> {
    let mut pieces = Vec::new();
    let mut literal_start = 0;
    let mut i = 0;
    while i < template.len() {
        match template[i] {
            brace @ (b'{' | b'}') => {
                if i > literal_start {
                    pieces.push(Piece::Literal(&template[literal_start..i]));
                }
                if template.get(i + 1) == Some(&brace) {
                    pieces.push(Piece::Literal(&template[i..i + 1]));
                    i += 2;
                } else if brace == b'}' {
                    return None; // "Single '}' encountered in format string"
                } else {
                    let key_start = i + 1;
                    let len = template[key_start..].iter().position(|&b| b == b'}')?;
                    let key = &template[key_start..key_start + len];
                    if !is_plain_key(key) {
                        return None;
                    }
                    pieces.push(Piece::Field(key));
                    i = key_start + len + 1;
                }
                literal_start = i;
            }
            _ => i += 1,
        }
    }
    if literal_start < template.len() {
        pieces.push(Piece::Literal(&template[literal_start..]));
    }
    Some(pieces)
}

/// What `safe_format` writes: its pieces in order.
pub struct Formatted<'a>(pub Vec<Chars<'a>>);

impl Render for Formatted<'_> {
    fn render(&self, out: &mut impl Sink) -> RenderResult {
        for piece in &self.0 {
            w!(out, *piece);
        }
        Ok(())
    }
}

/// The output of parsed `pieces`: `lookup(key)` is a field's value, `None` when the key is
/// missing (then the field stays as `{key}`).
pub fn format_pieces<'a, E>(
    pieces: &[Piece<'a>],
    mut lookup: impl FnMut(&'a [u8]) -> Result<Option<Chars<'a>>, E>,
) -> Result<Formatted<'a>, E> {
    let mut out = Vec::with_capacity(pieces.len());
    for piece in pieces {
        match *piece {
            Piece::Literal(text) => out.push(Chars::Utf8(text)),
            Piece::Field(key) => match lookup(key)? {
                Some(value) => out.push(value),
                None => out.extend([Chars::Utf8(b"{"), Chars::Utf8(key), Chars::Utf8(b"}")]),
            },
        }
    }
    Ok(Formatted(out))
}

/// `safe_format` with every value a string, as UTF-8. `None` when `parse_simple` declines.
pub fn safe_format<'v>(template: &[u8], lookup: impl Fn(&[u8]) -> Option<&'v [u8]>) -> Option<Out> {
    let escaped = escape_empty_fields(template);
    let pieces = parse_simple(&escaped)?;
    let formatted = format_pieces(&pieces, |key| Ok::<_, ()>(lookup(key).map(Chars::Utf8))).ok()?;
    Out::of(&formatted).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::Metadata;
    use crate::model::Int;
    use crate::model::Text;
    use crate::out::Final;

    fn meta() -> Metadata<'static> {
        Metadata {
            agent_id: Text::from(b"a"),
            conversation_id: Text::from(b"default"),
            timestamp: Text::from(b"5-01-01 12:00:00 AM "),
            previous_message_count: Text::from(b"0"),
            archival_memory_size: Some(Int::Small(0)),
            archive_tags: None,
        }
    }

    const FULL: &str = "MEM\n\n<memory_metadata>\n- AGENT_ID: a\n- CONVERSATION_ID: default\n\
                        - System prompt last recompiled: 5-01-01 12:00:00 AM \n\
                        - 0 previous messages between you and the user are stored in recall memory\n\
                        </memory_metadata>";

    fn system(template: &str, append: bool) -> String {
        let meta = Out::of(&meta()).unwrap().buf;
        let message =
            SystemMessage::new(Chars::Utf8(template.as_bytes()), Chars::Utf8(b"MEM"), Chars::Utf8(&meta), append);
        String::from_utf8(Out::of(&message).unwrap().buf).unwrap()
    }

    #[test]
    fn no_placeholder_appends_or_not() {
        assert_eq!(system("You are x.", true), format!("You are x.\n\n{FULL}"));
        assert_eq!(system("You are x.", false), "You are x.");
        assert_eq!(system("", true), format!("\n\n{FULL}"));
        assert_eq!(system("{CORE_MEMORY", true), format!("{{CORE_MEMORY\n\n{FULL}"));
    }

    #[test]
    fn every_placeholder_is_replaced() {
        assert_eq!(system("A {CORE_MEMORY} B", true), format!("A {FULL} B"));
        assert_eq!(system("{CORE_MEMORY}{CORE_MEMORY}", false), format!("{FULL}{FULL}"));
        assert_eq!(system("{{CORE_MEMORY}}", true), format!("{{{FULL}}}"));
        assert_eq!(system("{CORE_MEMORY}\n{CORE_MEMORY}x", true), format!("{FULL}\n{FULL}x"));
    }

    #[test]
    fn a_template_in_its_own_width_renders_as_its_utf8() {
        let meta = Out::of(&meta()).unwrap().buf;
        let filler = |c: char, n: usize| c.to_string().repeat(n);
        let mut templates: Vec<String> = [
            "",
            "{CORE_MEMORY}",
            "{CORE_MEMORY{CORE_MEMORY}}",
            "caf\u{e9} {CORE_MEMORY}",
            "\u{2192}{CORE_MEMORY}\u{2014}{CORE_MEMORY}",
            "\u{1F600}{CORE_MEMORY",
            "\u{d7ff}\0{CORE_MEMORY}\0",
        ]
        .map(String::from)
        .to_vec();
        // A placeholder starting at every place in and across the search's chunks of 16 units.
        for wide in ['a', '\u{e9}', '\u{2192}', '\u{1F600}'] {
            for before in 0..40 {
                templates.push(format!("{}{{CORE_MEMORY}}{}", filler(wide, before), filler(wide, 40 - before)));
            }
        }
        for template in &templates {
            let held = Final::of(template.as_bytes()).unwrap();
            for append in [true, false] {
                let message = |template| SystemMessage::new(template, Chars::Utf8(b"MEM"), Chars::Utf8(&meta), append);
                let (utf8, native) = (message(Chars::Utf8(template.as_bytes())), message(Chars::Native(held.native())));
                let expected = Out::of(&utf8).unwrap().buf;
                let fin = Final::of(&native).unwrap();
                assert_eq!(fin.to_utf8(), expected, "{template:?}");
                assert_eq!(fin.class, fin.exact_class(), "{template:?}");
            }
        }
    }

    #[test]
    fn occurrences_do_not_overlap() {
        assert_eq!(occurrences(b"aaaa", b"aa").collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(occurrences(b"abab", b"b").collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(occurrences(b"", b"a").count(), 0);
        assert_eq!(occurrences(b"a", b"").count(), 0);
        let mut out = Out::default();
        replace_into(&mut out, b"{}}{}", b"{}", b"{{}}");
        assert_eq!(out.buf, b"{{}}}{{}}");
    }

    fn fmt(template: &str, vars: &[(&'static str, &'static str)]) -> Option<String> {
        let out = safe_format(template.as_bytes(), |k| {
            vars.iter().find(|(name, _)| name.as_bytes() == k).map(|(_, v)| v.as_bytes())
        })?;
        Some(String::from_utf8(out.buf).unwrap())
    }

    #[test]
    fn safe_format_common_grammar() {
        let vars = [("name", "Sam"), ("CORE_MEMORY", "M"), (" a ", "sp")];
        assert_eq!(fmt("Hi {name}!", &vars).as_deref(), Some("Hi Sam!"));
        assert_eq!(fmt("{name}{name}", &vars).as_deref(), Some("SamSam"));
        assert_eq!(fmt("{missing} {}", &vars).as_deref(), Some("{missing} {}"));
        assert_eq!(fmt("{{name}} {{x}}", &vars).as_deref(), Some("{name} {x}"));
        assert_eq!(fmt("x{CORE_MEMORY}y", &vars).as_deref(), Some("xMy"));
        assert_eq!(fmt("{ a }", &vars).as_deref(), Some("sp"));
        assert_eq!(fmt("", &vars).as_deref(), Some(""));
        assert_eq!(fmt("}}{{", &vars).as_deref(), Some("}{"));
        assert_eq!(fmt("caf\u{e9} {x1}", &vars).as_deref(), Some("caf\u{e9} {x1}"));
    }

    #[test]
    fn safe_format_declines_the_rest() {
        for template in [
            "}",
            "{",
            "a}b",
            "{name",
            "{0}",
            "{12}",
            "{name!r}",
            "{name:>5}",
            "{a.b}",
            "{a[0]}",
            "{a]b}",
            "{{}",
            "{{}}",
            "{\u{e9}}",
            "{\u{663}}",
            "{name}}",
            "{a{b}c}",
        ] {
            assert_eq!(fmt(template, &[]), None, "{template}");
        }
    }

    #[test]
    fn parse_keeps_escapes_as_literals() {
        assert_eq!(
            parse_simple(b"a{{b}}{c}d"),
            Some(vec![
                Piece::Literal(b"a"),
                Piece::Literal(b"{"),
                Piece::Literal(b"b"),
                Piece::Literal(b"}"),
                Piece::Field(b"c"),
                Piece::Literal(b"d"),
            ])
        );
        assert_eq!(escape_empty_fields(b"{}{}"), Cow::<[u8]>::Owned(b"{{}}{{}}".to_vec()));
    }
}
