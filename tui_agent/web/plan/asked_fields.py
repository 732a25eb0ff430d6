"""The fields a task names, in its own words.

`asked_fields("Extract 30 books with title, author, genre and year")` gives
`["title", "author", "genre", "year"]`: the list after "with", "including", "fields" or a colon,
up to the end of its clause ("from the author page", "sorted by ...", a full stop). The field
namer gives a field found on the page the task's word for it (`name_fields(..., wanted=...)`).
"""

from __future__ import annotations

import re

_START = re.compile(
    r"(?:\b(?:with|including|include|fields?|columns?|showing|giving)\b\s*:?|:)\s*",
    re.IGNORECASE,
)
_END = re.compile(
    r"[.;!?()]|\b(?:from|on|sorted|ordered|where|whose|that|which|filtered|per|if|when|then"
    r"|for|in|of the|into|to)\b",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"\s*(?:,|&|/|\band\b|\bplus\b|\bas well as\b)\s*", re.IGNORECASE)
_LEADING = re.compile(
    r"^(?:(?:the|a|an|its|their|each|every|his|her|also|item'?s?|all)\s+)+", re.IGNORECASE
)
_POSSESSIVE = re.compile(r"^.*?(?:'s|\u2019s|s')\s+")
_URL = re.compile(r"\S+://\S*")
MAX_WORDS = 3
"""Words a field name has at most ("publication date", "number of pages")."""


def asked_fields(task: str) -> list[str]:
    """The field names a task lists, as written (lower case), each once; [] when none."""
    found: list[str] = []
    task = _URL.sub(" ", task)
    for start in _START.finditer(task):
        clause = task[start.end() :]
        end = _END.search(clause)
        for piece in _SPLIT.split(clause[: end.start()] if end else clause):
            words = _POSSESSIVE.sub("", _LEADING.sub("", piece.strip())).split()
            if 0 < len(words) <= MAX_WORDS and all(w.replace("-", "").isalpha() for w in words):
                found.append(" ".join(words).lower())
        if found:
            break
    return list(dict.fromkeys(found))
