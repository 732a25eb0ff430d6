"""Masking secrets in data that is recorded or shown: values under secret-looking keys.

A task's context may hold passwords and tokens its code needs (`email_password`, `api_key`);
the code gets them, but the store, the screen and the model's prompt get `MASK` instead.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

MASK = "***"
SECRET_WORDS = frozenset(
    {
        "password", "passwd", "passphrase", "pass", "pwd", "pin", "secret", "secrets",
        "token", "apikey", "credential", "credentials", "auth", "authorization", "cookie",
    }
)  # fmt: skip
SECRET_PAIRS = frozenset(
    {("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key"), ("session", "id")}
)
NOT_SECRET_KEYS = frozenset({"sort", "primary", "foreign", "cache", "lookup", "partition", "group"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATOR = re.compile(r"[^a-z0-9]+")


def is_secret_key(key: object) -> bool:
    """Whether values stored under `key` are to be masked: `password`, `email_password`,
    `API_KEY`, `authToken`, `x-api-key`, `smtp_pwd`, `stripe_key`; not `keyword`, `author`,
    `max_tokens` or `sort_key`."""
    if not isinstance(key, str):
        return False
    words = [w for w in _SEPARATOR.split(_CAMEL.sub("_", key).lower()) if w]
    if any(word in SECRET_WORDS for word in words):
        return True
    if any(pair in SECRET_PAIRS for pair in itertools.pairwise(words)):
        return True
    return len(words) >= 2 and words[-1] == "key" and words[-2] not in NOT_SECRET_KEYS


def mask_secrets(value: Any) -> Any:
    """`value` with every value under a secret-looking key (at any depth) replaced by MASK.

    Returns new containers; `value` itself is not changed.
    """
    if isinstance(value, dict):
        return {
            key: (MASK if is_secret_key(key) and item is not None else mask_secrets(item))
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [mask_secrets(item) for item in value]
    return value
