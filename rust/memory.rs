//! `Memory.compile`: mode selection and section order.

use crate::error::RenderResult;
use crate::model::CompileInput;
use crate::out::Out;
use crate::{blocks, directories, git_memory, line_numbered, tool_rules};

/// The agent types whose memory Letta renders with line numbers for Anthropic models.
const LINE_NUMBERED_TYPES: [&[u8]; 3] = [b"sleeptime_agent", b"memgpt_v2_agent", b"letta_v1_agent"];

/// Agent types that render no memory blocks, and the react form of `<directories>`.
const REACT_TYPES: [&[u8]; 2] = [b"react_agent", b"workflow_agent"];

/// A react or workflow agent (the lower-cased type): Letta neither reads nor renders its blocks.
pub fn is_react(agent_type: &[u8]) -> bool {
    REACT_TYPES.contains(&agent_type)
}

pub fn compile(out: &mut Out, input: &CompileInput) -> RenderResult {
    let agent_type: &[u8] = &input.agent_type;
    let react = is_react(agent_type);
    if !react {
        let start = out.len();
        if input.git_enabled {
            git_memory::render(out, &input.blocks)?;
        } else if input.anthropic && LINE_NUMBERED_TYPES.contains(&agent_type) {
            line_numbered::render(out, &input.blocks);
        } else {
            blocks::render(out, &input.blocks);
        }
        if !input.git_enabled && out.len() > start {
            out.section("memory_blocks", start);
        }
    }
    if let Some(rules) = &input.tool_usage_rules {
        // Each later section starts after the "\n\n" that separates it.
        let start = out.len() + 2;
        tool_rules::render_section(out, rules);
        out.section("tool_usage_rules", start);
    }
    if !input.sources.is_empty() {
        let start = out.len() + 2;
        directories::render(out, input, react);
        out.section("directories", start);
    }
    Ok(())
}
