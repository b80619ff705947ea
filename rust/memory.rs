//! `Memory.compile`: mode selection and section order.

use crate::error::RenderResult;
use crate::git_memory::{self, GitMemory};
use crate::model::CompileInput;
use crate::out::{Render, Sink};
use crate::{blocks, directories, line_numbered, tool_rules};

/// The sections a compile reports where they are, each named as its tag is.
pub mod section {
    pub const MEMORY_BLOCKS: &str = "memory_blocks";
    pub const SELF: &str = "self";
    pub const MEMORY: &str = "memory";
    pub const TOOL_USAGE_RULES: &str = "tool_usage_rules";
    pub const DIRECTORIES: &str = "directories";
    /// Every one of them.
    pub const ALL: [&str; 5] = [MEMORY_BLOCKS, SELF, MEMORY, TOOL_USAGE_RULES, DIRECTORIES];
}

/// The agent types whose memory Letta renders with line numbers for Anthropic models.
const LINE_NUMBERED_TYPES: [&[u8]; 3] = [b"sleeptime_agent", b"memgpt_v2_agent", b"letta_v1_agent"];

/// Agent types that render no memory blocks, and the react form of `<directories>`.
const REACT_TYPES: [&[u8]; 2] = [b"react_agent", b"workflow_agent"];

/// A react or workflow agent (the lower-cased type): Letta neither reads nor renders its blocks.
pub fn is_react(agent_type: &[u8]) -> bool {
    REACT_TYPES.contains(&agent_type)
}

/// A compile with its preparation done once (git memory's sorted labels and tree),
/// so that measuring and writing it render the same prepared form.
pub struct Compile<'i, 'a> {
    input: &'i CompileInput<'a>,
    git: Option<GitMemory<'i>>,
}

impl<'i, 'a> Compile<'i, 'a> {
    pub fn prepare(input: &'i CompileInput<'a>) -> RenderResult<Self> {
        let git =
            if input.git_enabled && !is_react(&input.agent_type) { git_memory::prepare(&input.blocks)? } else { None };
        Ok(Compile { input, git })
    }
}

pub fn compile(out: &mut impl Sink, prepared: &Compile) -> RenderResult {
    let input = prepared.input;
    let agent_type: &[u8] = &input.agent_type;
    let react = is_react(agent_type);
    if !react {
        let start = out.len();
        if input.git_enabled {
            if let Some(git) = &prepared.git {
                git.write(out);
            }
        } else if input.anthropic && LINE_NUMBERED_TYPES.contains(&agent_type) {
            line_numbered::render(out, &input.blocks);
        } else {
            blocks::render(out, &input.blocks);
        }
        if !input.git_enabled && out.len() > start {
            out.section(section::MEMORY_BLOCKS, start);
        }
    }
    if let Some(rules) = &input.tool_usage_rules {
        // Each later section starts after the "\n\n" that separates it.
        let start = out.len() + 2;
        tool_rules::render_section(out, rules);
        out.section(section::TOOL_USAGE_RULES, start);
    }
    if !input.sources.is_empty() {
        let start = out.len() + 2;
        directories::render(out, input, react);
        out.section(section::DIRECTORIES, start);
    }
    Ok(())
}

impl Render for Compile<'_, '_> {
    fn render(&self, out: &mut impl Sink) -> RenderResult {
        compile(out, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Block, Chars, Int, Text};
    use crate::out::{Final, Out};

    /// A block's text as the binding reads it from Python: with its own code units.
    fn held(s: &str) -> Final {
        Final::of(s.as_bytes()).unwrap()
    }

    #[test]
    fn native_and_utf8_inputs_render_the_same_in_every_mode() {
        let values = ["", "\n", "abc", "a\n\u{e9}\n", "\u{1F600}\nx\n\n", "\u{d7ff}\u{2192}\r\n\0"];
        let finals: Vec<Final> = values.iter().map(|v| held(v)).collect();
        fn block(value: Chars<'_>) -> Block<'_> {
            Block {
                label: Text::from(b"human"),
                value,
                description: Text::from(b"d"),
                limit: Int::Small(5),
                read_only: false,
            }
        }
        let utf8: Vec<Block> = values.iter().map(|v| block(Chars::Utf8(v.as_bytes()))).collect();
        let native: Vec<Block> = finals.iter().map(|f| block(Chars::Native(f.native()))).collect();
        for (agent_type, anthropic) in [(&b""[..], false), (b"letta_v1_agent", true)] {
            for one in 0..values.len() {
                fn input<'a>(blocks: &[Block<'a>], agent_type: &'a [u8], anthropic: bool) -> CompileInput<'a> {
                    CompileInput {
                        blocks: blocks.to_vec(),
                        agent_type: Text::from(agent_type),
                        anthropic,
                        ..CompileInput::default()
                    }
                }
                let (a, b) =
                    (input(&utf8[one..=one], agent_type, anthropic), input(&native[one..=one], agent_type, anthropic));
                let (a, b) = (Compile::prepare(&a).unwrap(), Compile::prepare(&b).unwrap());
                let expected = Out::of(&a).unwrap();
                assert_eq!(Out::of(&b).unwrap().buf, expected.buf, "{:?}", values[one]);
                let fin = Final::of(&b).unwrap();
                assert_eq!(fin.to_utf8(), expected.buf);
                assert_eq!(fin.class, fin.exact_class(), "{:?}", values[one]);
            }
        }
    }
}
