//! Drawing a file tree, as Letta draws the tree view, the skills listing and git
//! memory's external projection: rows of a prefix drawn by the levels above, a
//! connector, a name. The box-drawing characters are UCS-2 code units, so the final
//! `str` (always UCS-2 or wider once a row is drawn) copies them as they are.

use crate::out::Sink;
use crate::text::{Class, Native, Units};
use crate::w;

const TEE: &[u16] = &[0x251C, 0x2500, 0x2500, 0x20]; // "├── "
const ELBOW: &[u16] = &[0x2514, 0x2500, 0x2500, 0x20]; // "└── "
const PIPE: &[u16] = &[0x2502, 0x20, 0x20, 0x20]; // "│   "
const BLANK: &[u16] = &[0x20; 4];

fn ucs2(units: &[u16]) -> Native<'_> {
    Native { units: Units::Two(units), class: Class::Ucs2 }
}

/// The drawing left of a row, one indent per level above it. Written in one piece,
/// so that counting a row costs the same at any depth (deep trees are quadratic).
pub struct Prefix(Vec<u16>);

impl Default for Prefix {
    /// Room for eight levels, which most trees never pass.
    fn default() -> Self {
        Prefix(Vec::with_capacity(8 * BLANK.len()))
    }
}

/// A length of a `Prefix` to go back to.
#[derive(Clone, Copy, Default)]
pub struct Mark(usize);

impl Prefix {
    pub fn mark(&self) -> Mark {
        Mark(self.0.len())
    }

    pub fn reset(&mut self, mark: Mark) {
        self.0.truncate(mark.0);
    }

    /// What a row adds to the prefix of the rows below it.
    pub fn indent(&mut self, is_last: bool) {
        self.0.extend_from_slice(if is_last { BLANK } else { PIPE });
    }

    /// The prefix and the connector of a row. An all-blank prefix is written as UCS-2 too:
    /// exact, because the connector after it is.
    pub fn row_start(&self, out: &mut impl Sink, is_last: bool) {
        w!(out, ucs2(&self.0), ucs2(if is_last { ELBOW } else { TEE }));
    }
}

/// One line of a file tree: the prefix, the connector, `name` and `suffix`, `/` for a
/// directory, ` (note)` unless `note` is empty, and a newline.
pub struct Row<'r> {
    pub prefix: &'r Prefix,
    pub is_last: bool,
    pub name: &'r [u8],
    /// An ASCII literal (`.md`, or nothing).
    pub suffix: &'static str,
    pub is_dir: bool,
    pub note: &'r [u8],
    /// `name` and `note` are ASCII (every label and description of the tree is): written
    /// with nothing to measure or decode.
    pub ascii: bool,
}

impl Row<'_> {
    pub fn write(&self, out: &mut impl Sink) {
        let text = |out: &mut _, text| Sink::push_text(out, text, self.ascii);
        self.prefix.row_start(out, self.is_last);
        text(out, self.name);
        w!(out, self.suffix);
        if self.is_dir {
            w!(out, "/");
        }
        if !self.note.is_empty() {
            w!(out, " (");
            text(out, self.note);
            w!(out, ")");
        }
        w!(out, "\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::out::{Final, Out, Render};

    /// Three rows, their names and note written as ASCII or as UTF-8 (`Two(true)`, `Two(false)`).
    struct Two(bool);

    impl Two {
        fn row<'r>(&self, prefix: &'r Prefix, is_last: bool, name: &'r [u8], is_dir: bool) -> Row<'r> {
            Row { prefix, is_last, name, suffix: "", is_dir, note: b"", ascii: self.0 }
        }
    }

    impl Render for Two {
        fn render(&self, out: &mut impl Sink) -> crate::error::RenderResult {
            let mut prefix = Prefix::default();
            self.row(&prefix, false, b"a", true).write(out);
            let mark = prefix.mark();
            prefix.indent(false);
            Row { note: b"n", ..self.row(&prefix, true, b"b", false) }.write(out);
            prefix.reset(mark);
            prefix.indent(true);
            self.row(&prefix, true, b"c", false).write(out);
            Ok(())
        }
    }

    #[test]
    fn rows_draw_like_letta() {
        for ascii in [true, false] {
            let out = Out::of(&Two(ascii)).unwrap();
            assert_eq!(String::from_utf8(out.buf.clone()).unwrap(), "├── a/\n│   └── b (n)\n    └── c\n");
            let fin = Final::of(&Two(ascii)).unwrap();
            assert_eq!((fin.to_utf8(), fin.class), (out.buf, fin.exact_class()));
        }
    }
}
