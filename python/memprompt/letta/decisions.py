"""Letta's two rebuild paths for message[0], deciding exactly (README, Rebuild decisions) and costing nothing more.

``AgentManager.rebuild_system_prompt_async`` and ``LettaAgentV2._rebuild_memory`` are replaced by functions
that make Letta's own reads, through Letta's own managers and in Letta's order, and write what Letta
writes; only the decision differs:

- ``rebuild``: unforced, rebuild exactly when the template or the memory section changed (the exact parse
  of the stored text: no statement, where a stamp read would be one on a path that may not rebuild).
  Forced, rebuild as Letta does.
- ``stable``: forced or not, keep message[0] byte for byte unless its template or memory section changed;
  its blocks in label order (``in_label_order``), and a message[0] written before in the order PostgreSQL
  returned them kept too: an unchanged memory is never rewritten, whatever the plan.
- ``deferred``: as ``stable``, and the rebuild of an agent's own message[0] inside its own memory tool waits
  (``deferral``): one statement instead of a write.

Whether the new text differs is a comparison (Letta computes difflib's unified diff for that); the diff
is computed only for Letta's debug log, when it is on. Each written message[0] costs one more statement:
its stamp (``stamps``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal, Optional

from . import deferral, stamps
from .agent_memory import current_memory, stamp_of, tool_usage_rules
from .patching import copy_names, replace

Mode = Literal["render", "rebuild", "stable", "deferred"]


def install(mode: Mode) -> None:
    import letta.agents.letta_agent_v2 as letta_agent_v2
    import letta.services.agent_manager as agent_manager
    from letta.agents.letta_agent_v2 import LettaAgentV2
    from letta.services.agent_manager import AgentManager

    stable = mode in ("stable", "deferred")
    replace(
        AgentManager,
        {
            "rebuild_system_prompt_async": copy_names(
                _rebuild_system_prompt_async(stable, deferred=mode == "deferred"),
                vars(AgentManager)["rebuild_system_prompt_async"],
            )
        },
    )
    replace(
        LettaAgentV2,
        {"_rebuild_memory": copy_names(_rebuild_memory(stable), vars(LettaAgentV2)["_rebuild_memory"])},
    )
    # Letta's other callers of united_diff only log it when it is non-empty: a comparison decides that.
    for module in (agent_manager, letta_agent_v2):
        replace(module, {"united_diff": _united_diff(vars(module)["united_diff"])})


def text_part(content: Any) -> Optional[str]:
    """``content[0].text`` when ``content`` is one text part (every message[0] Letta writes), else None."""
    if content and len(content) == 1:
        text = getattr(content[0], "text", None)
        if isinstance(text, str):
            return text
    return None


def message_text(message: Any) -> Optional[str]:
    """The text Letta's rebuild paths read from a system message (``content[0].text`` for one text part)."""
    content = getattr(message, "content", None)
    text = text_part(content)
    if text is not None or content is None:
        return text
    content_text = message.to_openai_dict()["content"]
    return content_text if isinstance(content_text, str) else None


def _united_diff(letta_united_diff: Callable[[str, str], str]) -> Callable[[str, str], str]:
    def united_diff(old: str, new: str) -> str:
        # Letta only asks "is there a diff" and logs it at debug level: two equal texts have none.
        if old == new:
            return ""
        if _any_debug():
            return letta_united_diff(old, new)
        return "(diff computed only with debug logging on)"

    copy_names(united_diff, letta_united_diff)
    return united_diff


def _any_debug() -> bool:
    # Letta's loggers are "Letta" and its children (modules, agent ids): any of them at debug level wants the diff.
    if logging.getLogger("Letta").isEnabledFor(logging.DEBUG):
        return True
    return any(
        isinstance(logger, logging.Logger) and logger.isEnabledFor(logging.DEBUG)
        for name, logger in list(logging.Logger.manager.loggerDict.items())
        if name.startswith("Letta.")
    )


def _rebuild_system_prompt_async(stable: bool, deferred: bool) -> Callable[..., Any]:
    async def rebuild_system_prompt_async(
        self: Any,
        agent_id: str,
        actor: Any,
        force: bool = False,
        update_timestamp: bool = True,
        dry_run: bool = False,
    ) -> tuple[Any, Any, int, int]:
        import letta.services.agent_manager as agent_manager
        from letta.prompts.prompt_generator import PromptGenerator
        from letta.schemas.message import Message, MessageUpdate

        num_messages = await self.message_manager.size_async(actor=actor, agent_id=agent_id)
        num_archival = await self.passage_manager.agent_passage_size_async(actor=actor, agent_id=agent_id)
        agent_state = await self.get_agent_by_id_async(
            agent_id=agent_id, include_relationships=["memory", "sources", "tools"], actor=actor
        )
        rules_block = tool_usage_rules(agent_state.tool_rules)
        message = None
        if agent_state.message_ids:
            message = await self.message_manager.get_message_by_id_async(
                message_id=agent_state.message_ids[0], actor=actor
            )
        if message is None:
            agent_manager.logger.warning(f"No system message found for agent {agent_state.id} and user {actor}")
            return agent_state, message, num_messages, num_archival
        text = message_text(message)
        memory, kept = current_memory(agent_state, rules_block, text, force, stable)
        if kept:
            return agent_state, message, num_messages, num_archival
        if deferred and not dry_run and await deferral.defer(agent_state, rules_block, message.id, text, memory):
            return agent_state, message, num_messages, num_archival

        edited = agent_manager.get_utc_time() if update_timestamp else message.created_at
        new_text = PromptGenerator.get_system_message_from_compiled_memory(
            system_prompt=agent_state.system,
            memory_with_sources=memory.text,
            agent_id=agent_state.id,
            conversation_id="default",
            in_context_memory_last_edit=edited,
            timezone=agent_state.timezone,
            previous_message_count=num_messages - len(agent_state.message_ids),
            archival_memory_size=num_archival,
        )
        if new_text == text:
            return agent_state, message, num_messages, num_archival
        agent_manager.logger.debug(
            "Rebuilding system with new memory...\nDiff:\n%s", agent_manager.united_diff(text or "", new_text)
        )
        rebuilt = Message.dict_to_message(
            agent_id=agent_id,
            model=agent_state.llm_config.model,
            openai_message_dict={"role": "system", "content": new_text},
        )
        rebuilt.id = message.id
        if dry_run:
            return agent_state, rebuilt, num_messages, num_archival
        await self.message_manager.update_message_by_id_async(
            message_id=message.id,
            message_update=MessageUpdate(**rebuilt.model_dump()),
            actor=actor,
            project_id=agent_state.project_id,
        )
        await stamps.record([stamps.Record(message.id, new_text, stamp_of(agent_state.system, memory))])
        return agent_state, message, num_messages, num_archival

    return rebuild_system_prompt_async


def _rebuild_memory(stable: bool) -> Callable[..., Any]:
    async def rebuild_memory(
        self: Any,
        in_context_messages: list[Any],
        num_messages: Optional[int],
        num_archival_memories: Optional[int],
        force: bool = False,
    ) -> list[Any]:
        import letta.agents.letta_agent_v2 as letta_agent_v2
        from letta.prompts.prompt_generator import PromptGenerator
        from letta.schemas.message import MessageUpdate

        agent_state = await self.agent_manager.refresh_memory_async(agent_state=self.agent_state, actor=self.actor)
        rules_block = None if self.tool_rules_solver is None else self.tool_rules_solver.compile_tool_rule_prompts()
        archive = await self.archive_manager.get_default_archive_for_agent_async(
            agent_id=self.agent_state.id, actor=self.actor
        )
        archive_tags = None
        if archive:
            archive_tags = await self.passage_manager.get_unique_tags_for_archive_async(
                archive_id=archive.id, actor=self.actor
            )
        current = in_context_messages[0]
        text = current.content[0].text
        agent_state = await self.agent_manager.refresh_file_blocks(agent_state=agent_state, actor=self.actor)
        memory, kept = current_memory(agent_state, rules_block, text, force, stable)
        if kept:
            return in_context_messages

        edited = letta_agent_v2.get_utc_time()
        if num_messages is None:
            num_messages = await self.message_manager.size_async(actor=self.actor, agent_id=agent_state.id)
        if num_archival_memories is None:
            num_archival_memories = await self.passage_manager.agent_passage_size_async(
                actor=self.actor, agent_id=agent_state.id
            )
        new_text = PromptGenerator.get_system_message_from_compiled_memory(
            system_prompt=agent_state.system,
            memory_with_sources=memory.text,
            agent_id=agent_state.id,
            conversation_id=self.conversation_id or "default",
            in_context_memory_last_edit=edited,
            timezone=agent_state.timezone,
            previous_message_count=num_messages - len(in_context_messages),
            archival_memory_size=num_archival_memories,
            archive_tags=archive_tags,
        )
        if new_text == text:
            return in_context_messages
        self.logger.debug("Rebuilding system with new memory...\nDiff:\n%s", letta_agent_v2.united_diff(text, new_text))
        rebuilt = await self.message_manager.update_message_by_id_async(
            current.id, message_update=MessageUpdate(content=new_text), actor=self.actor
        )
        await stamps.record([stamps.Record(current.id, new_text, stamp_of(agent_state.system, memory))])
        return [rebuilt, *in_context_messages[1:]]

    return rebuild_memory
