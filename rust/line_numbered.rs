//! `<memory_blocks>` with line numbers, for Anthropic models of the newer agent types.

use crate::blocks::{metadata, tag, FOOTER, HEADER};
use crate::model::Block;
use crate::out::Sink;
use crate::text::{const_chars, const_ucs2, Class, Native, Units};
use crate::w;

/// Letta's `CORE_MEMORY_LINE_NUMBER_WARNING`.
pub const WARNING: &str = "# NOTE: Line numbers shown below (with arrows like '1\u{2192}') are to help during editing. Do NOT include line number prefixes in your memory edit tool calls.";

/// The warning in its own UCS-2 units (its arrow makes every output that holds it UCS-2 or wider).
const WARNING_UNITS: [u16; const_chars(WARNING)] = const_ucs2(WARNING);
const WARNING_NATIVE: Native = Native { units: Units::Two(&WARNING_UNITS), class: Class::Ucs2 };

/// Unlike the plain form, the wrapper is written even with no blocks.
pub fn render(out: &mut impl Sink, blocks: &[Block]) {
    w!(out, HEADER);
    for (i, block) in blocks.iter().enumerate() {
        let tag = tag(block);
        w!(out, "<", tag, ">\n<description>\n", block.description, "\n</description>\n");
        metadata(out, block);
        w!(out, "<warning>\n", WARNING_NATIVE, "\n</warning>\n<value>\n");
        if !block.value.is_empty() {
            out.numbered_lines(block.value);
        }
        w!(out, "</value>\n</", tag, ">\n");
        if i + 1 != blocks.len() {
            w!(out, "\n");
        }
    }
    w!(out, FOOTER);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Chars, Int, Text};
    use crate::out::Out;

    #[test]
    fn numbers_every_line() {
        let b = Block {
            label: Text::from(b"persona"),
            value: Chars::Utf8(b"a\r\n\nb"),
            description: Text::from(b""),
            limit: Int::Small(5),
            read_only: false,
        };
        let mut out = Out::default();
        render(&mut out, &[b]);
        let s = String::from_utf8(out.buf).unwrap();
        assert!(s.contains("<value>\n1\u{2192} a\r\n2\u{2192} \n3\u{2192} b\n</value>\n</persona>\n\n</memory_blocks>"));
    }

    #[test]
    fn wrapper_without_blocks() {
        let mut out = Out::default();
        render(&mut out, &[]);
        assert_eq!(String::from_utf8(out.buf).unwrap(), format!("{HEADER}{FOOTER}"));
    }
}
