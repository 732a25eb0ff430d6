"""A tool's result as the text a program gets: its text content, or "Error: ..." when the
tool reports an error."""

from __future__ import annotations

import json
from typing import Any

ERROR_PREFIX = "Error:"


def result_text(result: Any) -> str:
    """The text of an MCP CallToolResult: text blocks joined, other blocks described, the
    structured content as JSON when nothing else was sent; prefixed "Error: " for a tool
    error."""
    parts: list[str] = []
    for block in result.content or ():
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if text is not None else f"[resource {resource.uri}]")
        elif kind in ("image", "audio"):
            size = len(getattr(block, "data", "") or "") * 3 // 4
            parts.append(f"[{kind} {getattr(block, 'mime_type', '')}, about {size:,} bytes]")
        elif kind == "resource_link":
            parts.append(f"[resource link {block.uri}]")
    text = "\n".join(parts)
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        text = json.dumps(structured, ensure_ascii=False)
    if result.is_error:
        return as_error(text or "the tool failed and said nothing")
    return text


def as_error(text: str) -> str:
    """`text` as a tool error: it starts with "Error:" ("Error executing x" becomes
    "Error: executing x")."""
    if text.startswith(ERROR_PREFIX):
        return text
    if text.startswith("Error "):
        text = text.removeprefix("Error ")
    return f"{ERROR_PREFIX} {text}"
