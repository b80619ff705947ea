"""The installed ``_core.pyi``: every public name it declares has a docstring (stubtest checks the signatures)."""

from __future__ import annotations

import ast
from pathlib import Path

import memprompt


def public_definitions(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """Every public function, class, method, property and annotated attribute, by qualified name."""
    found: list[tuple[str, ast.AST]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            found.append((node.name, node))
            if isinstance(node, ast.ClassDef):
                body = node.body
                for i, member in enumerate(body):
                    if isinstance(member, ast.FunctionDef) and (
                        not member.name.startswith("_") or member.name == "__new__"
                    ):
                        found.append((f"{node.name}.{member.name}", member))
                    elif isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
                        following = body[i + 1] if i + 1 < len(body) else None
                        found.append((f"{node.name}.{member.target.id}", following or member))
    return found


def has_docstring(node: ast.AST) -> bool:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return ast.get_docstring(node) is not None
    # An attribute's docstring is the string expression right after it.
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def test_every_public_name_of_the_stub_has_a_docstring():
    stub = Path(memprompt.__file__).parent / "_core.pyi"
    tree = ast.parse(stub.read_text())
    definitions = public_definitions(tree)
    assert len(definitions) > 20
    missing = [name for name, node in definitions if not has_docstring(node)]
    assert missing == []


def test_the_stub_lists_what_the_extension_exports():
    stub = ast.parse((Path(memprompt.__file__).parent / "_core.pyi").read_text())
    declared = next(
        node.value
        for node in stub.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__"
    )
    assert sorted(ast.literal_eval(declared)) == sorted(memprompt._core.__all__)
