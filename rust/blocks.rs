//! `<memory_blocks>`: the plain form.

use crate::model::{Block, Text};
use crate::out::Sink;
use crate::w;

pub const HEADER: &str =
    "<memory_blocks>\nThe following memory blocks are currently engaged in your core memory unit:\n\n";
pub const FOOTER: &str = "\n</memory_blocks>";

/// Letta's `block.label or "block"`.
pub fn tag<'b>(block: &'b Block<'_>) -> &'b Text<'b> {
    static BLOCK: Text<'static> = Text::ascii(b"block");
    if block.label.is_empty() {
        &BLOCK
    } else {
        &block.label
    }
}

/// The `<metadata>` element shared by both forms of `<memory_blocks>`.
pub fn metadata(out: &mut impl Sink, block: &Block) {
    w!(out, "<metadata>");
    if block.read_only {
        w!(out, "\n- read_only=true");
    }
    w!(out, "\n- chars_current=", block.value.char_len(), "\n- chars_limit=", block.limit, "\n</metadata>\n");
}

/// Nothing at all when there are no blocks.
pub fn render(out: &mut impl Sink, blocks: &[Block]) {
    if blocks.is_empty() {
        return;
    }
    w!(out, HEADER);
    for (i, block) in blocks.iter().enumerate() {
        let tag = tag(block);
        w!(out, "<", tag, ">\n<description>\n", block.description, "\n</description>\n");
        metadata(out, block);
        w!(out, "<value>\n", block.value, "\n</value>\n</", tag, ">\n");
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

    pub fn block<'a>(label: &'a str, value: &'a str) -> Block<'a> {
        Block {
            label: Text::from(label.as_bytes()),
            value: Chars::Utf8(value.as_bytes()),
            description: Text::from(b"d"),
            limit: Int::Small(100),
            read_only: false,
        }
    }

    #[test]
    fn one_block() {
        let mut out = Out::default();
        render(&mut out, &[block("human", "h\u{e9}")]);
        assert_eq!(
            String::from_utf8(out.buf).unwrap(),
            "<memory_blocks>\nThe following memory blocks are currently engaged in your core memory unit:\n\n\
             <human>\n<description>\nd\n</description>\n<metadata>\n- chars_current=2\n- chars_limit=100\n</metadata>\n\
             <value>\nh\u{e9}\n</value>\n</human>\n\n</memory_blocks>"
        );
    }

    struct Blocks<'a>(Vec<Block<'a>>);

    impl crate::out::Render for Blocks<'_> {
        fn render(&self, out: &mut impl Sink) -> crate::error::RenderResult {
            render(out, &self.0);
            Ok(())
        }
    }

    #[test]
    fn an_unlabelled_block_is_a_block_in_every_width() {
        // The "block" tag is written as code units of its own: in a wide output too.
        for value in ["a", "\u{e9}", "\u{2192}", "\u{1F600}"] {
            let stored = crate::out::Final::of(value.as_bytes()).unwrap();
            let unlabelled = Block { label: Text::from(b""), value: Chars::Native(stored.native()), ..block("", "") };
            let r = Blocks(vec![unlabelled, block("human", value)]);
            let fin = crate::out::Final::of(&r).unwrap();
            let out = Out::of(&r).unwrap();
            assert_eq!(fin.to_utf8(), out.buf, "{value:?}");
            assert_eq!(fin.class, fin.exact_class(), "{value:?}");
            let text = String::from_utf8(out.buf).unwrap();
            assert!(text.contains("<block>\n<description>\nd\n</description>"), "{text}");
            assert!(text.contains(&format!("<value>\n{value}\n</value>\n</block>\n")), "{text}");
        }
    }

    #[test]
    fn no_blocks_no_wrapper() {
        let mut out = Out::default();
        render(&mut out, &[]);
        assert!(out.is_empty());
    }

    #[test]
    fn empty_label_is_block_and_read_only_shows() {
        let mut b = block("", "");
        b.read_only = true;
        let mut out = Out::default();
        render(&mut out, &[b.clone(), b]);
        let s = String::from_utf8(out.buf).unwrap();
        assert!(s.contains("<block>\n"));
        assert!(s.contains("<metadata>\n- read_only=true\n- chars_current=0"));
        assert!(s.contains("</block>\n\n<block>"));
    }
}
