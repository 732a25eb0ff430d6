"""Masking secrets in data that is recorded, shown or sent to a model.

A task's (or an exec run's) context may hold passwords and tokens its code needs
(`email_password`, `headers.X-Api-Key`, a `postgres://user:pw@host` URL); the code gets them in
the sandbox, but the store, the screen and the model's prompts never do. A `SecretMask` learns
the secrets of a context, then masks them two ways:

- by key: a value under a secret-looking key (at any depth) becomes `MASK` in what is recorded
  or shown, and `<secret:PATH>` in what a model reads (so it knows where to look in `context`);
- by value: wherever a secret's text appears (printed output, an error, a copy under another
  key, a URL) it becomes `<secret:PATH>`. Only values of at least MIN_SECRET_CHARS characters
  are masked by value: a 3-character password would otherwise mask innocent text everywhere
  (it is still masked under its key). The password part of any URL (`scheme://user:pw@host`)
  and PEM private key blocks are masked wherever they appear, whatever their length.

Masking by value catches secrets that leak by accident; code that encodes a secret on
purpose (reversed, base64) is not caught.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import UnionType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Union, get_args, get_origin
from urllib.parse import quote, quote_plus, unquote

from pydantic import BaseModel

if TYPE_CHECKING:
    from tui_agent.events import SessionStarted

MASK = "***"
MIN_SECRET_CHARS = 6
SECRET_WORDS = frozenset(
    {
        "password", "passwd", "passphrase", "pass", "passcode", "pwd", "pin", "otp", "totp",
        "secret", "secrets", "token", "apikey", "credential", "credentials", "auth",
        "authorization", "bearer", "cookie", "cookies", "dsn", "pat", "jwt", "privkey",
    }
)  # fmt: skip
SECRET_SUFFIXES = (
    "password", "passwd", "passphrase", "passcode", "secret", "token", "apikey", "privatekey",
    "accesskey", "secretkey", "sessionid", "cookie", "credentials", "credential",
)  # fmt: skip
"""Run-together keys (`dbpassword`, `xsrftoken`, `clientsecret`) that end with a secret word."""
SECRET_PAIRS = frozenset(
    {
        ("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key"),
        ("session", "id"), ("ssh", "private"), ("gpg", "private"), ("pgp", "private"),
        ("rsa", "private"), ("connection", "string"), ("conn", "str"),
    }
)  # fmt: skip
NOT_SECRET_KEYS = frozenset({"sort", "primary", "foreign", "cache", "lookup", "partition", "group"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATOR = re.compile(r"[^a-z0-9]+")
_URL_PASSWORD = re.compile(
    r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/?#@]*:)(?!<secret:)(?P<password>[^\s/?#@]+)(?=@)"
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
)
_SCHEMED = re.compile(r"^(?:bearer|basic|token|bot|digest)\s+(\S+)$", re.IGNORECASE)
URL_PASSWORD_LABEL = "url-password"
PRIVATE_KEY_LABEL = "private-key"
_EVENT_FIELDS = frozenset({"schema_version", "session_id", "seq", "ts"})
"""Fields every event carries that hold no data of its own (ids, stamps): never masked."""

Path = tuple[str | int, ...]
ModelT = TypeVar("ModelT", bound=BaseModel)


def is_secret_key(key: object) -> bool:
    """Whether values stored under `key` are to be masked: `password`, `email_password`,
    `API_KEY`, `authToken`, `x-api-key`, `smtp_pwd`, `stripe_key`, `dsn`, `ssh_private`,
    `dbpassword`; not `keyword`, `author`, `max_tokens` or `sort_key`."""
    if not isinstance(key, str):
        return False
    words = [w for w in _SEPARATOR.split(_CAMEL.sub("_", key).lower()) if w]
    if any(word in SECRET_WORDS or word.endswith(SECRET_SUFFIXES) for word in words):
        return True
    if any(pair in SECRET_PAIRS for pair in itertools.pairwise(words)):
        return True
    return len(words) >= 2 and words[-1] == "key" and words[-2] not in NOT_SECRET_KEYS


def _label(path: Path) -> str:
    return ".".join(str(part) for part in path)


def access_expression(path: Path) -> str:
    """How code reads the value at `path`: `context['headers']['X-Api-Key']`."""
    return "context" + "".join(f"[{part!r}]" for part in path)


@dataclass(frozen=True)
class Secret:
    """A secret of a context: where it is (`path` from the context's top, and a `part` of
    the value there such as "password" for a URL's password) and its text."""

    path: Path
    value: str
    part: str = ""

    @property
    def label(self) -> str:
        return _label(self.path) + (f"#{self.part}" if self.part else "")

    @property
    def placeholder(self) -> str:
        return f"<secret:{self.label}>"

    @property
    def where(self) -> str:
        """Where code finds it: `context['headers']['X-Api-Key']`, or "the password in
        context['db_url']"."""
        place = access_expression(self.path)
        return f"the {self.part.replace('-', ' ')} in {place}" if self.part else place


def _spellings(value: str) -> Iterator[str]:
    """The ways a secret's text shows up in output: as is, escaped in JSON or a Python repr,
    percent-encoded; a multi-line secret line by line too (output is recorded per line)."""
    yield value
    yield json.dumps(value, ensure_ascii=False)[1:-1]
    yield repr(value)[1:-1]
    yield quote(value, safe="")
    yield quote_plus(value, safe="")
    if "\n" in value:
        yield from (line.strip() for line in value.splitlines())


def _leaves(value: Any, path: Path) -> Iterator[tuple[Path, str]]:
    """Every string (and integer) inside `value`, with its path."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    elif isinstance(value, str):
        yield path, value
    elif isinstance(value, int) and not isinstance(value, bool):
        yield path, str(value)


def _fixed(annotation: Any) -> bool:
    """A field whose values are fixed words (a Literal, maybe optional): never masked."""
    if get_origin(annotation) is Literal:
        return True
    if get_origin(annotation) in (Union, UnionType):
        return all(arg is type(None) or get_origin(arg) is Literal for arg in get_args(annotation))
    return False


class SecretMask:
    """The secrets learned from contexts, and masking by key and by value (module docstring).

    `learn` may be called again as new contexts come (a workflow's next node, a run that
    wrote a new secret key); masking uses everything learned so far.
    """

    def __init__(self) -> None:
        self._listed: dict[str, Secret] = {}
        self._by_text: dict[str, Secret] = {}
        self._pattern: re.Pattern[str] | None = None

    @classmethod
    def of(cls, context: Any) -> SecretMask:
        """A mask holding the secrets of `context`."""
        mask = cls()
        mask.learn(context)
        return mask

    # -- learning --------------------------------------------------------------------------
    def learn(self, context: Any, path: Path = ()) -> None:
        """Add the secrets in `context`: values under secret keys, URL passwords and private
        keys in any string."""
        if isinstance(context, dict):
            for key, item in context.items():
                where = (*path, str(key))
                if is_secret_key(key) and item is not None:
                    self._list(Secret(where, ""))
                    for leaf_path, text in _leaves(item, where):
                        self._add(Secret(leaf_path, text))
                        schemed = _SCHEMED.match(text.strip())
                        if schemed:
                            self._add(Secret(leaf_path, schemed.group(1), "token"))
                self.learn(item, where)
        elif isinstance(context, list | tuple):
            for index, item in enumerate(context):
                self.learn(item, (*path, index))
        elif isinstance(context, str):
            for found in _URL_PASSWORD.finditer(context):
                password = found.group("password")
                self._add(Secret(path, password, "password"))
                self._add(Secret(path, unquote(password), "password"))
                self._list(Secret(path, "", "password"))
            for block in _PRIVATE_KEY.findall(context):
                self._add(Secret(path, block, "private-key"))
                self._list(Secret(path, "", "private-key"))

    def _list(self, secret: Secret) -> None:
        """Keep `secret` for the prompt's list, unless a secret key above it is listed."""
        above = (secret.path[:n] for n in range(1, len(secret.path) + 1))
        if not any(Secret(path, "").label in self._listed for path in above):
            self._listed[secret.label] = secret

    def _add(self, secret: Secret) -> None:
        for text in _spellings(secret.value):
            if len(text) >= MIN_SECRET_CHARS and text not in self._by_text:
                self._by_text[text] = secret
                self._pattern = None

    @property
    def listed(self) -> list[Secret]:
        """Where the secrets are, one per secret key (and per URL password or private key
        under no secret key): what a model's prompt lists. Their `value` is left empty."""
        return list(self._listed.values())

    # -- masking ---------------------------------------------------------------------------
    def text(self, text: str) -> str:
        """`text` with every secret in it replaced by its placeholder."""
        if self._by_text:
            if self._pattern is None:
                spellings = sorted(self._by_text, key=len, reverse=True)
                self._pattern = re.compile("|".join(map(re.escape, spellings)))
            text = self._pattern.sub(lambda m: self._by_text[m.group(0)].placeholder, text)
        text = _PRIVATE_KEY.sub(f"<secret:{PRIVATE_KEY_LABEL}>", text)
        return _URL_PASSWORD.sub(rf"\g<head><secret:{URL_PASSWORD_LABEL}>", text)

    def masked(self, value: Any) -> Any:
        """`value` as it may be recorded or shown: values under secret keys are MASK, secrets
        elsewhere are placeholders. New containers; `value` itself is not changed."""
        return self._walk(value, (), lambda _path: MASK)

    def placeholders(self, value: Any) -> Any:
        """`value` as a model may read it: every secret is its `<secret:PATH>` placeholder."""
        return self._walk(value, (), lambda path: Secret(path, "").placeholder)

    def masked_event(self, event: ModelT) -> ModelT:
        """`event` (any pydantic model) with every free-text field and data value masked;
        ids, stamps and fixed words (Literal fields) are kept."""
        return self._model(event, lambda _path: MASK)

    def _walk(self, value: Any, path: Path, keyed: Callable[[Path], str]) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                (self.text(key) if isinstance(key, str) else key): (
                    keyed((*path, str(key)))
                    if is_secret_key(key) and item is not None
                    else self._walk(item, (*path, str(key)), keyed)
                )
                for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            items = [self._walk(item, (*path, n), keyed) for n, item in enumerate(value)]
            return items if isinstance(value, list) else tuple(items)
        if isinstance(value, BaseModel):
            return self._model(value, keyed)
        return value

    def _model(self, model: ModelT, keyed: Callable[[Path], str]) -> ModelT:
        fields = type(model).model_fields
        update = {
            name: self._walk(getattr(model, name), (), keyed)
            for name, info in fields.items()
            if name not in _EVENT_FIELDS and not _fixed(info.annotation)
        }
        return model.model_copy(update=update)


def masked_start(started: SessionStarted, mask: SecretMask) -> SessionStarted:
    """A SessionStarted masked by `mask`, marked `request_masked` when its request changed
    (the stored request then lacks secrets the run had)."""
    masked = mask.masked_event(started)
    if masked.request != started.request:
        masked = masked.model_copy(update={"request_masked": True})
    return masked


def mask_secrets(value: Any) -> Any:
    """`value` masked by its own secrets (SecretMask.of(value).masked(value))."""
    return SecretMask.of(value).masked(value)
