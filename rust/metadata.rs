//! `<memory_metadata>`: what the agent is told about its memory outside the prompt.

use crate::error::RenderResult;
use crate::model::{Int, Text};
use crate::out::{Render, Sink};
use crate::w;

/// The inputs of the block, already rendered as Letta's f-strings render them.
#[derive(Debug, Clone)]
pub struct Metadata<'a> {
    pub agent_id: Text<'a>,
    pub conversation_id: Text<'a>,
    /// The formatted `memory_edit_timestamp` (see `timestamp`).
    pub timestamp: Text<'a>,
    pub previous_message_count: Text<'a>,
    /// `None` for Python's `None`. The line is written only when the count is positive
    /// (see `is_positive`).
    pub archival_memory_size: Option<Int<'a>>,
    /// `None` when Python's `archive_tags` was falsy; otherwise the tags, joined with `", "`.
    pub archive_tags: Option<Vec<Text<'a>>>,
}

/// Letta's `archival_memory_size > 0`. `Int::Rendered` holds the decimal text of an int
/// (negative when it starts with `-`); the binding passes an int subclass only once
/// Python's own `> 0` held for it.
pub fn is_positive(n: &Int) -> bool {
    match n {
        Int::Small(v) => *v > 0,
        Int::Rendered(t) => !t.starts_with(b"-") && t.iter().any(|&b| b != b'0'),
    }
}

/// The block, its lines joined by `"\n"`, with no newline before or after.
pub fn render(out: &mut impl Sink, m: &Metadata) {
    w!(
        out,
        "<memory_metadata>\n- AGENT_ID: ",
        m.agent_id,
        "\n- CONVERSATION_ID: ",
        m.conversation_id,
        "\n- System prompt last recompiled: ",
        m.timestamp,
        "\n- ",
        m.previous_message_count,
        " previous messages between you and the user are stored in recall memory",
    );
    if let Some(n) = m.archival_memory_size.as_ref().filter(|n| is_positive(n)) {
        w!(out, "\n- ", *n, " total memories you created are stored in archival memory (use tools to access them)");
    }
    if let Some(tags) = &m.archive_tags {
        w!(out, "\n- Available archival memory tags: ");
        for (i, tag) in tags.iter().enumerate() {
            if i > 0 {
                w!(out, ", ");
            }
            w!(out, *tag);
        }
    }
    w!(out, "\n</memory_metadata>");
}

impl Render for Metadata<'_> {
    fn render(&self, out: &mut impl Sink) -> RenderResult {
        render(out, self);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Text;
    use crate::out::Out;

    fn t(s: &str) -> Text<'_> {
        Text::from(s.as_bytes())
    }

    fn show(m: &Metadata) -> String {
        let mut out = Out::default();
        render(&mut out, m);
        String::from_utf8(out.buf).unwrap()
    }

    fn base() -> Metadata<'static> {
        Metadata {
            agent_id: t("agent-1"),
            conversation_id: t("default"),
            timestamp: t("2024-01-15 09:00:00 AM PST-0800"),
            previous_message_count: t("0"),
            archival_memory_size: Some(Int::Small(0)),
            archive_tags: None,
        }
    }

    #[test]
    fn minimal_block() {
        assert_eq!(
            show(&base()),
            "<memory_metadata>\n- AGENT_ID: agent-1\n- CONVERSATION_ID: default\n\
             - System prompt last recompiled: 2024-01-15 09:00:00 AM PST-0800\n\
             - 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>"
        );
    }

    #[test]
    fn archival_and_tags() {
        let mut m = base();
        m.previous_message_count = t("42");
        m.archival_memory_size = Some(Int::Small(156));
        m.archive_tags = Some(vec![t("project_x"), t(""), t("ideas")]);
        assert_eq!(
            show(&m),
            "<memory_metadata>\n- AGENT_ID: agent-1\n- CONVERSATION_ID: default\n\
             - System prompt last recompiled: 2024-01-15 09:00:00 AM PST-0800\n\
             - 42 previous messages between you and the user are stored in recall memory\n\
             - 156 total memories you created are stored in archival memory (use tools to access them)\n\
             - Available archival memory tags: project_x, , ideas\n</memory_metadata>"
        );
        m.archive_tags = Some(vec![]);
        assert!(show(&m).ends_with("- Available archival memory tags: \n</memory_metadata>"));
    }

    #[test]
    fn archival_line_only_when_positive() {
        for (n, shown) in [
            (None, false),
            (Some(Int::Small(-3)), false),
            (Some(Int::Small(1)), true),
            (Some(Int::Rendered(Box::new(t("-99999999999999999999")))), false),
            (Some(Int::Rendered(Box::new(t("99999999999999999999")))), true),
            (Some(Int::Rendered(Box::new(t("True")))), true),
            (Some(Int::Rendered(Box::new(t("0")))), false),
        ] {
            let mut m = base();
            m.archival_memory_size = n;
            assert_eq!(show(&m).contains("archival memory (use tools"), shown);
        }
    }
}
