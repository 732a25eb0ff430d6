"""JSON Schema to Python type annotations, for the generated tool functions.

string -> str, integer -> int, number -> float, boolean -> bool, null -> None,
array -> list[T], object with properties -> a TypedDict (keys not required are NotRequired),
object without -> dict[str, T] (T from additionalProperties, else Any), enum and const ->
Literal, anyOf / oneOf / a list of types -> a union, $ref -> what it points to. Anything else
is Any. TypedDicts use the functional syntax, so any key name works, and are written before
the ones that use them.
"""

from __future__ import annotations

import keyword
import re
from typing import Any

SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
LITERAL_TYPES = (str, int, bool)


def camel(text: str) -> str:
    """`read_file`, `read-file` or `readFile` as `ReadFile`."""
    words = re.split(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])", text)
    name = "".join(word[:1].upper() + word[1:] for word in words if word)
    return name if name and not name[0].isdigit() else f"T{name}"


def identifier(text: str) -> str:
    """`text` as a Python identifier: other characters as `_`, a leading digit prefixed,
    a keyword suffixed with `_`."""
    name = re.sub(r"\W+", "_", text, flags=re.ASCII).strip("_") or "value"
    if name[0].isdigit():
        name = f"n_{name}"
    return f"{name}_" if keyword.iskeyword(name) else name


def union(parts: list[str]) -> str:
    """`a | b` without repeats; Any absorbs the rest; None goes last."""
    unique = list(dict.fromkeys(parts))
    if "Any" in unique or not unique:
        return "Any"
    if "None" in unique:
        unique = [p for p in unique if p != "None"] + ["None"]
    return " | ".join(unique)


class TypeWriter:
    """Annotations for the schemas of one tool; the TypedDicts they need pile up in
    `definitions` (source text, in dependency order), named `<prefix><Name>`."""

    def __init__(self, root: dict[str, Any], prefix: str, taken: set[str]) -> None:
        self.root = root
        self.prefix = prefix
        self.taken = taken
        self.definitions: list[str] = []
        self.typing: set[str] = set()
        self._refs: dict[str, str] = {}
        self._resolving: set[str] = set()

    def annotation(self, schema: Any, hint: str) -> str:
        """The annotation for `schema`; `hint` names a TypedDict it may need."""
        if not isinstance(schema, dict):
            return self._any()
        if "$ref" in schema:
            return self._ref(str(schema["$ref"]))
        if "const" in schema:
            return self._literal([schema["const"]])
        if "enum" in schema and isinstance(schema["enum"], list):
            return self._literal(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                return union([self.annotation(s, hint) for s in schema[key]]) or self._any()
        if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
            return self.annotation(schema["allOf"][0], hint)
        kind = schema.get("type")
        if isinstance(kind, list):
            return union([self.annotation({**schema, "type": k}, hint) for k in kind])
        if kind is None:
            kind = "object" if "properties" in schema else "array" if "items" in schema else None
        if kind in SCALARS:
            return SCALARS[kind]
        if kind == "array":
            items = schema.get("items")
            return f"list[{self.annotation(items, hint + 'Item')}]"
        if kind == "object":
            return self._object(schema, hint)
        return self._any()

    def _any(self) -> str:
        self.typing.add("Any")
        return "Any"

    def _literal(self, values: list[Any]) -> str:
        kept = [v for v in values if v is None or isinstance(v, LITERAL_TYPES)]
        if len(kept) != len(values) or not kept:
            return "float" if all(isinstance(v, int | float) for v in values) else self._any()
        literal = [v for v in kept if v is not None]
        parts = []
        if literal:
            self.typing.add("Literal")
            parts.append(f"Literal[{', '.join(repr(v) for v in literal)}]")
        if None in kept:
            parts.append("None")
        return union(parts)

    def _ref(self, ref: str) -> str:
        if ref in self._refs:
            return self._refs[ref]
        if ref in self._resolving or not ref.startswith("#/"):
            self._any()
            return "dict[str, Any]"  # a recursive or outside reference: not followed
        target: Any = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        self._resolving.add(ref)
        try:
            annotation = self.annotation(target, camel(ref.rsplit("/", 1)[-1]))
        finally:
            self._resolving.discard(ref)
        self._refs[ref] = annotation
        return annotation

    def _object(self, schema: dict[str, Any], hint: str) -> str:
        properties = schema.get("properties")
        if not isinstance(properties, dict) or not properties:
            extra = schema.get("additionalProperties")
            value = self.annotation(extra, hint + "Value") if isinstance(extra, dict) else None
            return f"dict[str, {value or self._any()}]"
        required = set(schema.get("required") or [])
        fields = []
        for key, sub in properties.items():
            value = self.annotation(sub, hint + camel(key))
            if key not in required:
                self.typing.add("NotRequired")
                value = f"NotRequired[{value}]"
            fields.append(f"        {key!r}: {value},")
        name = self._name(hint)
        self.typing.add("TypedDict")
        body = "\n".join(fields)
        self.definitions.append(f'{name} = TypedDict(\n    "{name}",\n    {{\n{body}\n    }},\n)')
        return name

    def _name(self, hint: str) -> str:
        base = hint if hint.startswith(self.prefix) else self.prefix + hint
        name, number = base, 2
        while name in self.taken:
            name, number = f"{base}{number}", number + 1
        self.taken.add(name)
        return name
