//! `<directories>`: the attached sources and the files of each that the agent holds.
//!
//! Two forms. The common one names a file in an attribute and writes its
//! `<description>` and `<value>` only when they are non-empty; the react one
//! (for `react_agent` and `workflow_agent`) wraps each file in a tag named
//! after its label and always writes both.

use std::collections::{HashMap, HashSet};

use crate::blocks::metadata;
use crate::model::{Block, CompileInput, FileBlock, Source, Text};
use crate::out::Sink;
use crate::w;

/// What Letta's directories read of a file block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileReads {
    /// Its label, value, description, limit and read-only flag: it belongs to a listed source.
    Whole,
    /// Its value alone, for the count of open files.
    Value,
    Nothing,
}

/// The listed sources' ids, which decide what Letta reads of each file block: its
/// `source_id` only while a source has an id, the rest only when that id is a source's,
/// and every file block's value when it counts the open files (`max_files_open` given).
pub struct SourceIds<'i> {
    ids: HashSet<&'i [u8]>,
    counting: bool,
}

impl<'i> SourceIds<'i> {
    pub fn of(sources: &'i [Source<'_>], counting: bool) -> Self {
        SourceIds { ids: sources.iter().filter_map(|s| s.id.as_deref()).collect(), counting }
    }

    /// Whether a file block's `source_id` is read at all.
    pub fn reads_source_id(&self) -> bool {
        !self.ids.is_empty()
    }

    /// What is read of a file block whose `source_id` (read when `reads_source_id`) is this.
    pub fn reads(&self, source_id: Option<&[u8]>) -> FileReads {
        match source_id {
            Some(id) if self.ids.contains(id) => FileReads::Whole,
            _ if self.counting => FileReads::Value,
            _ => FileReads::Nothing,
        }
    }
}

/// Letta's `fb.label or "file"`.
fn file_label<'b>(block: &'b Block<'_>) -> &'b Text<'b> {
    static FILE: Text<'static> = Text::ascii(b"file");
    if block.label.is_empty() {
        &FILE
    } else {
        &block.label
    }
}

/// A file is open when its value is non-empty.
fn status(block: &Block) -> &'static str {
    if block.value.is_empty() {
        "closed"
    } else {
        "open"
    }
}

/// The common form of one file.
fn file_common(out: &mut impl Sink, block: &Block) {
    w!(out, "<file status=\"", status(block), "\" name=\"", file_label(block), "\">\n");
    if !block.description.is_empty() {
        w!(out, "<description>\n", block.description, "\n</description>\n");
    }
    metadata(out, block);
    if !block.value.is_empty() {
        w!(out, "<value>\n", block.value, "\n</value>\n");
    }
    w!(out, "</file>\n");
}

/// The react form of one file.
fn file_react(out: &mut impl Sink, block: &Block) {
    let label = file_label(block);
    w!(out, "<file status=\"", status(block), "\">\n<", label, ">\n");
    w!(out, "<description>\n", block.description, "\n</description>\n");
    metadata(out, block);
    w!(out, "<value>\n", block.value, "\n</value>\n</", label, ">\n</file>\n");
}

/// The file blocks of each source id, in their original order.
///
/// Letta scans every file block for every source; grouping them once keeps
/// many sources with many files linear.
fn files_by_source<'i, 'a>(file_blocks: &'i [FileBlock<'a>]) -> HashMap<&'i [u8], Vec<&'i Block<'a>>> {
    let mut by_source: HashMap<&[u8], Vec<&Block>> = HashMap::new();
    for fb in file_blocks {
        if let Some(id) = &fb.source_id {
            by_source.entry(&**id).or_default().push(&fb.block);
        }
    }
    by_source
}

/// `_render_directories_common` (or `_render_directories_react` when `react`).
pub fn render(out: &mut impl Sink, input: &CompileInput, react: bool) {
    w!(out, "\n\n<directories>\n");
    if let Some(max) = &input.max_files_open {
        let open = input.file_blocks.iter().filter(|fb| !fb.block.value.is_empty()).count();
        w!(out, "<file_limits>\n- current_files_open=", open, "\n- max_files_open=");
        out.num(max);
        w!(out, "\n</file_limits>\n");
    }
    let file = if react { file_react } else { file_common };
    // One source needs one scan; more share an index built once.
    let by_source = if input.sources.len() > 1 { files_by_source(&input.file_blocks) } else { HashMap::new() };

    for source in &input.sources {
        w!(out, "<directory name=\"", source.name, "\">\n");
        if !source.description.is_empty() {
            w!(out, "<description>", source.description, "</description>\n");
        }
        if !source.instructions.is_empty() {
            w!(out, "<instructions>", source.instructions, "</instructions>\n");
        }
        // A source without an id holds no file, even one whose source_id is None.
        if let Some(id) = &source.id {
            if input.sources.len() > 1 {
                for block in by_source.get(&**id).into_iter().flatten() {
                    file(out, block);
                }
            } else {
                for fb in &input.file_blocks {
                    if fb.source_id.as_ref() == Some(id) {
                        file(out, &fb.block);
                    }
                }
            }
        }
        w!(out, "</directory>\n");
    }
    w!(out, "</directories>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Chars, Int, Source, Text};
    use crate::out::Out;

    #[test]
    fn file_blocks_are_read_as_letta_reads_them() {
        let source = |id: Option<&'static [u8]>| Source {
            id: id.map(Text::from),
            name: Text::from(b"s"),
            description: Text::default(),
            instructions: Text::default(),
        };
        let sources = [source(Some(b"a")), source(None), source(Some(b"b"))];
        for counting in [false, true] {
            let ids = SourceIds::of(&sources, counting);
            assert!(ids.reads_source_id());
            let other = if counting { FileReads::Value } else { FileReads::Nothing };
            assert_eq!(ids.reads(Some(b"a")), FileReads::Whole);
            assert_eq!(ids.reads(Some(b"b")), FileReads::Whole);
            assert_eq!(ids.reads(Some(b"c")), other);
            assert_eq!(ids.reads(None), other);
            // No source with an id: no source_id is read, and no file block belongs to one.
            let none = SourceIds::of(&sources[1..2], counting);
            assert!(!none.reads_source_id());
            assert_eq!(none.reads(None), other);
        }
    }

    fn text(s: &str) -> Text<'_> {
        Text::from(s.as_bytes())
    }

    fn source<'a>(id: Option<&'a str>, name: &'a str, description: &'a str, instructions: &'a str) -> Source<'a> {
        Source { id: id.map(text), name: text(name), description: text(description), instructions: text(instructions) }
    }

    fn file<'a>(
        label: &'a str,
        value: &'a str,
        description: &'a str,
        limit: i64,
        source_id: Option<&'a str>,
    ) -> FileBlock<'a> {
        FileBlock {
            block: Block {
                label: text(label),
                value: Chars::Utf8(value.as_bytes()),
                description: text(description),
                limit: Int::Small(limit),
                read_only: false,
            },
            source_id: source_id.map(text),
        }
    }

    /// Three sources (one without an id), files of two of them, a file of none,
    /// an unlabelled read-only closed file, and a closed file with a description.
    fn input() -> CompileInput<'static> {
        let mut unlabelled = file("", "", "", 50, Some("s1"));
        unlabelled.block.read_only = true;
        CompileInput {
            sources: vec![
                source(Some("s1"), "docs", "Manuals", "Read first"),
                source(None, "None", "", ""),
                source(Some("s2"), "code", "", ""),
            ],
            file_blocks: vec![
                file("a.md", "hello", "About a", 100, Some("s1")),
                unlabelled,
                file("c.py", "x = 1", "", 10, Some("s2")),
                file("orphan", "o", "", 1, None),
                file("b.md", "", "B", 5, Some("s1")),
            ],
            max_files_open: Some(Int::Small(5)),
            ..Default::default()
        }
    }

    fn rendered(input: &CompileInput, react: bool) -> String {
        let mut out = Out::default();
        render(&mut out, input, react);
        String::from_utf8(out.buf).unwrap()
    }

    #[test]
    fn common_form() {
        assert_eq!(
            rendered(&input(), false),
            concat!(
                "\n\n<directories>\n",
                "<file_limits>\n",
                "- current_files_open=3\n",
                "- max_files_open=5\n",
                "</file_limits>\n",
                "<directory name=\"docs\">\n",
                "<description>Manuals</description>\n",
                "<instructions>Read first</instructions>\n",
                "<file status=\"open\" name=\"a.md\">\n",
                "<description>\n",
                "About a\n",
                "</description>\n",
                "<metadata>\n",
                "- chars_current=5\n",
                "- chars_limit=100\n",
                "</metadata>\n",
                "<value>\n",
                "hello\n",
                "</value>\n",
                "</file>\n",
                "<file status=\"closed\" name=\"file\">\n",
                "<metadata>\n",
                "- read_only=true\n",
                "- chars_current=0\n",
                "- chars_limit=50\n",
                "</metadata>\n",
                "</file>\n",
                "<file status=\"closed\" name=\"b.md\">\n",
                "<description>\n",
                "B\n",
                "</description>\n",
                "<metadata>\n",
                "- chars_current=0\n",
                "- chars_limit=5\n",
                "</metadata>\n",
                "</file>\n",
                "</directory>\n",
                "<directory name=\"None\">\n",
                "</directory>\n",
                "<directory name=\"code\">\n",
                "<file status=\"open\" name=\"c.py\">\n",
                "<metadata>\n",
                "- chars_current=5\n",
                "- chars_limit=10\n",
                "</metadata>\n",
                "<value>\n",
                "x = 1\n",
                "</value>\n",
                "</file>\n",
                "</directory>\n",
                "</directories>",
            )
        );
    }

    #[test]
    fn react_form() {
        assert_eq!(
            rendered(&input(), true),
            concat!(
                "\n\n<directories>\n",
                "<file_limits>\n",
                "- current_files_open=3\n",
                "- max_files_open=5\n",
                "</file_limits>\n",
                "<directory name=\"docs\">\n",
                "<description>Manuals</description>\n",
                "<instructions>Read first</instructions>\n",
                "<file status=\"open\">\n",
                "<a.md>\n",
                "<description>\n",
                "About a\n",
                "</description>\n",
                "<metadata>\n",
                "- chars_current=5\n",
                "- chars_limit=100\n",
                "</metadata>\n",
                "<value>\n",
                "hello\n",
                "</value>\n",
                "</a.md>\n",
                "</file>\n",
                "<file status=\"closed\">\n",
                "<file>\n",
                "<description>\n",
                "\n",
                "</description>\n",
                "<metadata>\n",
                "- read_only=true\n",
                "- chars_current=0\n",
                "- chars_limit=50\n",
                "</metadata>\n",
                "<value>\n",
                "\n",
                "</value>\n",
                "</file>\n",
                "</file>\n",
                "<file status=\"closed\">\n",
                "<b.md>\n",
                "<description>\n",
                "B\n",
                "</description>\n",
                "<metadata>\n",
                "- chars_current=0\n",
                "- chars_limit=5\n",
                "</metadata>\n",
                "<value>\n",
                "\n",
                "</value>\n",
                "</b.md>\n",
                "</file>\n",
                "</directory>\n",
                "<directory name=\"None\">\n",
                "</directory>\n",
                "<directory name=\"code\">\n",
                "<file status=\"open\">\n",
                "<c.py>\n",
                "<description>\n",
                "\n",
                "</description>\n",
                "<metadata>\n",
                "- chars_current=5\n",
                "- chars_limit=10\n",
                "</metadata>\n",
                "<value>\n",
                "x = 1\n",
                "</value>\n",
                "</c.py>\n",
                "</file>\n",
                "</directory>\n",
                "</directories>",
            )
        );
    }

    #[test]
    fn one_source_without_limits() {
        // Without max_files_open there is no <file_limits>; a single source is scanned directly.
        let mut input = input();
        input.sources = vec![source(Some("s9"), "empty", "", "")];
        input.max_files_open = None;
        assert_eq!(
            rendered(&input, false),
            "\n\n<directories>\n<directory name=\"empty\">\n</directory>\n</directories>"
        );
        input.sources = vec![source(Some("s2"), "code", "", "")];
        assert!(rendered(&input, false).contains("<directory name=\"code\">\n<file status=\"open\" name=\"c.py\">\n"));
    }

    #[test]
    fn many_sources_keep_file_order_and_repeat_shared_ids() {
        let ids: Vec<String> = (0..1000).map(|i| format!("id{i}")).collect();
        let labels: Vec<String> = (0..10_000).map(|i| format!("f{i}")).collect();
        let mut sources: Vec<Source> = ids.iter().map(|id| source(Some(id), id, "", "")).collect();
        sources.push(source(Some("id7"), "again", "", ""));
        // File i belongs to source i % 1000, listed out of source order.
        let file_blocks = labels.iter().enumerate().map(|(i, l)| file(l, "", "", 1, Some(&ids[i % 1000]))).collect();
        let input = CompileInput { sources, file_blocks, ..Default::default() };
        let out = rendered(&input, false);
        let files_of_7 = (0..10).map(|k| format!("name=\"f{}\"", k * 1000 + 7));
        let section =
            &out[out.find("<directory name=\"id7\">").unwrap()..out.find("<directory name=\"id8\">").unwrap()];
        let positions: Vec<usize> = files_of_7.clone().map(|f| section.find(&f).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]));
        let again = &out[out.find("<directory name=\"again\">").unwrap()..];
        assert_eq!(again.matches("<file ").count(), 10);
        assert_eq!(out.matches("<file ").count(), 10_010);
    }
}
