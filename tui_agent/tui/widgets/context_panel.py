"""A task session's context: before, and after each task or workflow node, as a tree whose
new and changed keys are marked; beside it, the `_ai_metadata` of the node under the cursor."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from tui_agent.events import TaskResult
from tui_agent.formatting import INTERNAL_KEYS, METADATA_KEY, format_cost, written_keys

LABEL_CHARS = 90
MAX_CHILDREN = 50
METADATA_ROWS = (
    ("status", "status"),
    ("model", "model"),
    ("model from", "model_source"),
    ("validator", "validator_model"),
    ("attempts", "attempts"),
    ("cache hit", "cache_hit"),
    ("stages", "stages_used"),
    ("model calls", "model_calls"),
    ("tokens in", "tokens_input_estimated"),
    ("tokens out", "tokens_output_estimated"),
    ("usage from", "usage_source"),
    ("generation", "generation_time_ms"),
    ("execution", "execution_time_ms"),
    ("total", "total_time_ms"),
    ("tool calls", "total_tool_calls"),
)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _label(key: str, value: Any, mark: str = "") -> Text:
    """`key: value` (a dict or list by its size), marked `+ new` or `~ changed`."""
    if isinstance(value, dict):
        shown = f"{{{len(value)} keys}}"
    elif isinstance(value, list):
        shown = f"[{len(value)} items]"
    else:
        shown = _short(value)
    label = Text.assemble((key, "bold"), ": ", shown)
    if mark == "new":
        label.append("  + new", style="bold green")
    elif mark == "changed":
        label.append("  ~ changed", style="bold yellow")
    return label


def _add_value(parent: TreeNode[Any], key: str, value: Any, mark: str = "") -> None:
    """`value` under `parent`: a leaf, or an expandable node for a dict or list."""
    if isinstance(value, dict | list):
        node = parent.add(_label(key, value, mark), expand=False)
        items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        for child_key, child in items[:MAX_CHILDREN]:
            _add_value(node, str(child_key), child)
        if len(items) > MAX_CHILDREN:
            node.add_leaf(Text(f"… {len(items) - MAX_CHILDREN} more", style="dim"))
    else:
        parent.add_leaf(_label(key, value, mark))


def metadata_content(metadata: dict[str, Any]) -> Content:
    """The figures of one `_ai_metadata`, a line each, and the error when it failed."""
    if not metadata:
        return Content.styled("No result yet: the task is running.", "dim italic")
    parts: list[str | tuple[str, str]] = [("_ai_metadata\n", "bold")]
    for label, key in METADATA_ROWS:
        if key not in metadata:
            continue
        value = metadata[key]
        if key.endswith("_ms") and isinstance(value, int):
            value = f"{value:,} ms"
        parts += [(f"{label:<12}", "$text-muted"), f"{value}\n"]
    called = metadata.get("usage_source") != "none"  # no call: no price known, as elsewhere
    cost = metadata.get("cost_usd_estimated") if called else None
    parts += [(f"{'cost':<12}", "$text-muted"), f"{format_cost(cost)}\n"]
    validation = metadata.get("output_validation")
    if validation:
        parts += [(f"{'validator':<12}", "$text-muted"), f"{validation.get('reason')}\n"]
    if metadata.get("final_error"):
        parts.append((f"\n{metadata['final_error']}", "$text-error bold"))
    return Content.assemble(*parts).rstrip()


class ContextPanel(Horizontal):
    """The context tree (left) and the metadata of the highlighted node (right)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._key: tuple[object, ...] | None = None
        self._results: list[TaskResult] = []

    def compose(self) -> ComposeResult:
        tree: Tree[int] = Tree("context", id="context-tree")
        tree.show_root = False
        yield tree
        with VerticalScroll(id="metadata-scroll"):
            yield Static(id="metadata")

    def show(self, before: dict[str, Any], results: list[TaskResult]) -> None:
        """The context given to the session, then what each task or node returned."""
        key = (id(before), len(results))
        if key == self._key:
            return
        self._key = key
        self._results = list(results)
        tree = self.query_one(Tree)
        tree.clear()
        given = tree.root.add(Text("before (the context given)", style="bold"), data=-1)
        for name, value in before.items():
            if name not in INTERNAL_KEYS:
                _add_value(given, str(name), value)
        given.expand()
        for index, result in enumerate(results):
            self._add_result(tree, index, result)
        self._show_metadata(len(results) - 1)

    def _add_result(self, tree: Tree[int], index: int, result: TaskResult) -> None:
        node = result.node if result.node != "task" else ""
        mark = "✓" if result.status == "success" else "✗"
        title = f"{mark} after {node}".rstrip() + (
            "" if result.status == "success" else " (failed)"
        )
        style = "$text-success bold" if result.status == "success" else "$text-error bold"
        branch = tree.root.add(Text(title, style=style), data=index, expand=True)
        written = set(written_keys(result))
        for name, value in result.context.items():
            if name in INTERNAL_KEYS:
                continue
            mark_as = ""
            if name in written:
                mark_as = "changed" if name in result.input_context else "new"
            _add_value(branch, str(name), value, mark_as)

    def _show_metadata(self, index: int) -> None:
        metadata: dict[str, Any] = {}
        if 0 <= index < len(self._results):
            metadata = self._results[index].context.get(METADATA_KEY) or {}
        self.query_one("#metadata", Static).update(metadata_content(metadata))

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[int]) -> None:
        node: TreeNode[int] | None = event.node
        while node is not None and node.data is None:
            node = node.parent
        if node is not None and node.data is not None and node.data >= 0:
            self._show_metadata(node.data)
