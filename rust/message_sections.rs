//! The sections of a whole system message: where the template's own text, each section of
//! the memory and the metadata block lie, from the exact parse of the message against its
//! template (`fingerprint::place`) and the spans of the compile that made its memory. Nothing
//! is searched for by its tag: a block value holding `</memory_blocks>`, or a block labelled
//! `tool_usage_rules`, stays inside the section it belongs to.
//!
//! The sections are in message order and do not overlap; between two of them, and before the
//! first, there are only the `"\n\n"` separators Letta writes before a section.

use crate::fingerprint::{place, Placed, METADATA_START};
use crate::git_memory::REMINDER;
use crate::memory::section;
use crate::out::Section;
use crate::text::Native;

/// The names of a message's sections beside the memory's own (`memory::section`).
pub mod name {
    /// The template's text around the memory (a piece before and after each `{CORE_MEMORY}`).
    pub const SYSTEM_PROMPT: &str = "system_prompt";
    /// Git memory's first line, before `<self>` and `<memory>`.
    pub const REMINDER: &str = "reminder";
    /// The `<memory_metadata>` block that follows the memory.
    pub const MEMORY_METADATA: &str = "memory_metadata";
    /// Every one of them.
    pub const ALL: [&str; 3] = [SYSTEM_PROMPT, REMINDER, MEMORY_METADATA];
}

/// Why a message's sections cannot be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mismatch {
    /// The message was not built from the template: its text does not frame a memory.
    Template,
    /// No `<memory_metadata>` block follows the memory.
    Metadata,
    /// The message's memory section is not the memory given.
    Memory,
    /// The memory's spans do not lie on its text (overlapping, out of it, or text between them).
    Spans,
}

/// The sections of `message`, built from `template` around `memory`, whose own sections are
/// `spans` (in code points of `memory`, any order).
pub fn message_sections(
    template: Native<'_>,
    message: Native<'_>,
    memory: Native<'_>,
    spans: &[Section],
) -> Result<Vec<Section>, Mismatch> {
    let inner = memory_sections(memory, spans)?;
    let mut placed = Vec::new();
    place(template, message, |part| placed.push(part)).ok_or(Mismatch::Template)?;
    let mut sections = Vec::with_capacity(placed.len() + inner.len() + 1);
    // Every occurrence holds the same text (`place` checked): the first one is compared.
    let mut memory_len = None;
    for part in placed {
        match part {
            Placed::Template(range) if !range.is_empty() => {
                sections.push(Section { name: name::SYSTEM_PROMPT, start: range.start, end: range.end });
            }
            Placed::Template(_) | Placed::Appended(_) => {}
            Placed::Memory(range) => {
                let len = match memory_len {
                    Some(len) => len,
                    None => {
                        // Cut at the memory's own length, not at a search for the metadata's tag: a
                        // metadata block holding that tag (an archive tag can) is cut right too.
                        let filled = message.slice(range.start, range.end);
                        let len = memory.len();
                        if len > filled.len() || !filled.slice(0, len).same_text(memory) {
                            return Err(Mismatch::Memory);
                        }
                        if !filled.slice(len, filled.len()).starts_with_ascii(METADATA_START) {
                            return Err(Mismatch::Metadata);
                        }
                        *memory_len.insert(len)
                    }
                };
                let at = range.start;
                sections.extend(inner.iter().map(|s| Section { name: s.name, start: at + s.start, end: at + s.end }));
                let start = at + len + 2;
                sections.push(Section { name: name::MEMORY_METADATA, start, end: range.end });
            }
        }
    }
    Ok(sections)
}

/// The memory's spans in order, git memory's reminder line before them, each empty one
/// dropped, once they are shown to tile its text with nothing but `"\n\n"` between them.
fn memory_sections(memory: Native<'_>, spans: &[Section]) -> Result<Vec<Section>, Mismatch> {
    let mut inner: Vec<Section> = spans.iter().copied().filter(|s| s.start != s.end).collect();
    inner.sort_unstable_by_key(|s| s.start);
    let git = inner.first().is_some_and(|s| s.name == section::SELF || s.name == section::MEMORY);
    if git && memory.starts_with_ascii(REMINDER.as_bytes()) {
        inner.insert(0, Section { name: name::REMINDER, start: 2, end: REMINDER.len() });
    }
    let mut at = 0;
    for s in &inner {
        if s.start < at || s.end < s.start || s.end > memory.len() || !separators(memory.slice(at, s.start)) {
            return Err(Mismatch::Spans);
        }
        at = s.end;
    }
    if !separators(memory.slice(at, memory.len())) {
        return Err(Mismatch::Spans);
    }
    Ok(inner)
}

/// Whether `text` is nothing but `"\n\n"` separators (or empty).
fn separators(text: Native<'_>) -> bool {
    text.len().is_multiple_of(2) && text.count_newlines() == text.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::out::Final;

    const META: &str = "<memory_metadata>\n- AGENT_ID: a\n</memory_metadata>";

    /// A text held as Python holds it (in its own width).
    fn held(s: &str) -> Final {
        Final::of(s.as_bytes()).unwrap()
    }

    /// The sections of `message` as (name, text) pairs, or the mismatch.
    fn cut(
        template: &str,
        message: &str,
        memory: &str,
        spans: &[(&'static str, usize, usize)],
    ) -> Result<Vec<(&'static str, String)>, Mismatch> {
        let (t, m, mem) = (held(template), held(message), held(memory));
        let spans: Vec<Section> = spans.iter().map(|&(name, start, end)| Section { name, start, end }).collect();
        let found = message_sections(t.native(), m.native(), mem.native(), &spans)?;
        Ok(found.iter().map(|s| (s.name, message.chars().skip(s.start).take(s.end - s.start).collect())).collect())
    }

    #[test]
    fn appended_memory_and_its_sections() {
        let memory = "<memory_blocks>\nv</memory_blocks>\n\n<tool_usage_rules>\nr\n</tool_usage_rules>";
        let message = format!("You are X.\n\n{memory}\n\n{META}");
        let spans = [("tool_usage_rules", 35, memory.len()), ("memory_blocks", 0, 33)];
        assert_eq!(
            cut("You are X.", &message, memory, &spans),
            Ok(vec![
                ("system_prompt", "You are X.".into()),
                ("memory_blocks", "<memory_blocks>\nv</memory_blocks>".into()),
                ("tool_usage_rules", "<tool_usage_rules>\nr\n</tool_usage_rules>".into()),
                ("memory_metadata", META.into()),
            ])
        );
    }

    #[test]
    fn every_placeholder_and_the_template_between() {
        let memory = "<m>\u{2192}</m>";
        let message = format!("A{memory}\n\n{META}B{memory}\n\n{META}");
        let found = cut("A{CORE_MEMORY}B{CORE_MEMORY}", &message, memory, &[("memory_blocks", 0, 8)]).unwrap();
        let names: Vec<&str> = found.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            names,
            ["system_prompt", "memory_blocks", "memory_metadata", "system_prompt", "memory_blocks", "memory_metadata"]
        );
        assert_eq!(found[3].1, "B");
    }

    #[test]
    fn git_memory_starts_with_its_reminder() {
        let memory = format!("{REMINDER}\n\n<self>\np\n</self>\n\n<memory>\n</memory>");
        let self_start = REMINDER.len() + 2;
        let memory_start = self_start + "<self>\np\n</self>".len() + 2;
        let message = format!("S\n\n{memory}\n\n{META}");
        let spans = [("self", self_start, memory_start - 2), ("memory", memory_start, memory.len())];
        let found = cut("S", &message, &memory, &spans).unwrap();
        assert_eq!(found[1], ("reminder", REMINDER[2..].to_string()));
        assert_eq!(found[2].0, "self");
        assert_eq!(found[3], ("memory", "<memory>\n</memory>".into()));
    }

    #[test]
    fn a_fake_metadata_block_in_the_memory_stays_in_it() {
        let memory = "<memory_blocks>\n\n\n<memory_metadata>\nfake\n</memory_metadata></memory_blocks>";
        let message = format!("S\n\n{memory}\n\n{META}");
        let found = cut("S", &message, memory, &[("memory_blocks", 0, memory.len())]).unwrap();
        assert_eq!(found[1].1, memory);
        assert_eq!(found[2].1, META);
    }

    #[test]
    fn a_metadata_block_holding_its_own_tag_is_cut_after_the_memory() {
        let memory = "<memory_blocks>v</memory_blocks>";
        let metadata = "<memory_metadata>\n- tags: a\n\n<memory_metadata>\n</memory_metadata>";
        let message = format!("S\n\n{memory}\n\n{metadata}");
        let found = cut("S", &message, memory, &[("memory_blocks", 0, memory.len())]).unwrap();
        assert_eq!(found[1].1, memory);
        assert_eq!(found[2], ("memory_metadata", metadata.to_string()));
    }

    #[test]
    fn empty_memory_and_empty_template() {
        let message = format!("\n\n\n\n{META}");
        assert_eq!(cut("", &message, "", &[]), Ok(vec![("memory_metadata", META.into())]));
    }

    #[test]
    fn mismatches() {
        let memory = "<memory_blocks>v</memory_blocks>";
        let spans = [("memory_blocks", 0, memory.len())];
        let message = format!("S\n\n{memory}\n\n{META}");
        assert_eq!(cut("T", &message, memory, &spans), Err(Mismatch::Template));
        assert_eq!(cut("S", &format!("S\n\n{memory}"), memory, &spans), Err(Mismatch::Metadata));
        assert_eq!(cut("S", &message, "<memory_blocks>w</memory_blocks>", &spans), Err(Mismatch::Memory));
        // Spans that leave text out, overlap, or run past the memory.
        for bad in [[("memory_blocks", 1, memory.len())], [("memory_blocks", 0, memory.len() + 1)]] {
            assert_eq!(cut("S", &message, memory, &bad), Err(Mismatch::Spans));
        }
        let overlapping = [("memory_blocks", 0, 20), ("tool_usage_rules", 10, memory.len())];
        assert_eq!(cut("S", &message, memory, &overlapping), Err(Mismatch::Spans));
        assert_eq!(cut("S", &message, memory, &[]), Err(Mismatch::Spans));
    }
}
