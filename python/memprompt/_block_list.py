"""The block-list methods Letta's ``Memory`` has, shared by memprompt's two ``Memory`` classes."""

from __future__ import annotations

from typing import Any


class BlockListMethods:
    """``get_block``, ``set_block``, ``update_block_value`` and friends, with Letta's semantics and errors."""

    blocks: list[Any]

    def list_block_labels(self) -> list[Any]:
        return [block.label for block in self.blocks]

    def get_blocks(self) -> list[Any]:
        return self.blocks

    def get_block(self, label: str) -> Any:
        for block in self.blocks:
            if block.label == label:
                return block
        # Letta joins the labels, so a None label here is a TypeError.
        available = ", ".join(block.label for block in self.blocks)
        raise KeyError(f"Block field {label} does not exist (available sections = {available})")

    def set_block(self, block: Any) -> None:
        """Replace the first block with the same label, or append."""
        for position, existing in enumerate(self.blocks):
            if existing.label == block.label:
                self.blocks[position] = block
                return
        self.blocks.append(block)

    def update_block_value(self, label: str, value: str) -> None:
        if not isinstance(value, str):
            raise ValueError("Provided value must be a string")
        for block in self.blocks:
            if block.label == label:
                block.value = value
                return
        raise ValueError(f"Block with label {label} does not exist")
