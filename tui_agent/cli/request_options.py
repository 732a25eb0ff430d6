"""A request's fields as command-line arguments, and its errors in a shell's words.

Each field with an `Option` becomes an argument: positional without a flag, `store_true`
(or `store_false` for a `--no-...` flag of a field on by default) for booleans, `append` for
lists, `choices` for Literals. Defaults stay the request's: an argument left out is left out
of the request. Nothing is checked here; the request checks everything (`RequestError`),
and `shell_line` says it with the field's flag (and, for a settings-backed field left empty,
its variable).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from pydantic_core import PydanticUndefined

from tui_agent.agents.requests import RequestBase, RequestError, request_from_inputs
from tui_agent.agents.requests.base import Option, base_type, choices_of, field_options
from tui_agent.agents.requests.readers import json_object_text
from tui_agent.cli.common import Handler, UsageError, record_request
from tui_agent.config import Settings

R = TypeVar("R", bound=RequestBase)
_DEFAULT = re.compile(r"\{default(?::([^}]*))?\}")


def add_request_arguments(
    parser: argparse.ArgumentParser,
    cls: type[RequestBase],
    *,
    only: Iterable[str] | None = None,
    require: bool = True,
    optional_positionals: bool = False,
) -> None:
    """Add an argument for each field of `cls` the CLI shows (`only` those named), except
    the ones every command has (--model, --api-base). `require`: a field with no default is a
    required argument (False: the request says it is missing instead); `optional_positionals`:
    so is a positional one (a command that may take its own instead, as `code --continue
    ID`)."""
    chosen = set(only) if only is not None else None
    for name, option in field_options(cls):
        if option.common or (chosen is not None and name not in chosen):
            continue
        info = cls.model_fields[name]
        default = None if info.default is PydanticUndefined else info.default
        help_text = _help(option, default)
        if option.flag is None:
            parser.add_argument(
                name,
                metavar=option.metavar,
                help=help_text,
                type=_type(option, info.annotation),
                nargs="?" if optional_positionals else None,
            )
            continue
        kind = base_type(info.annotation)
        arguments: dict[str, Any] = {"dest": name, "help": help_text, "default": None}
        if kind is bool:
            arguments["action"] = "store_false" if default else "store_true"
        elif kind is list:
            arguments.update(action="append", metavar=option.metavar)
        else:
            choices = choices_of(info.annotation)
            arguments.update(
                type=_type(option, info.annotation),
                metavar=option.metavar,
                required=require and info.is_required(),
                choices=[c for c in choices if c is not None] or None,
            )
        parser.add_argument(option.flag, **arguments)


def _help(option: Option, default: Any) -> str:
    def filled(found: re.Match[str]) -> str:
        return format(default, found.group(1) or "")

    return _DEFAULT.sub(filled, option.help).replace("%", "%%")


def _type(option: Option, annotation: Any) -> Any:
    if option.reader is not None:
        return str
    kind = base_type(annotation)
    return kind if kind in (int, float, Path) else None


def request_from_args(cls: type[R], args: argparse.Namespace) -> R:
    """The `cls` request the parsed arguments describe (a context file '-' is standard
    input); a RequestError names the field of the first problem."""
    inputs: dict[str, Any] = {}
    for name, option in field_options(cls):
        value = getattr(args, name, None)
        if value is None:
            continue
        if option.reader == "json_object_file" and value == "-":
            value = json_object_text(sys.stdin.read(), f"the {name} on standard input", name)
            if option.keeps_path is not None:
                inputs[option.keeps_path] = "-"
        inputs[name] = value
    return request_from_inputs(cls, inputs)


def shell_line(error: RequestError, cls: type[RequestBase]) -> str:
    """`error` as one line for a shell: each field named by its flag; a settings-backed field
    left empty says how to give it ("no model: pass --model or set TUI_AGENT_MODEL")."""
    options = dict(field_options(cls))

    def name_of(field: str) -> str:
        option = options.get(field)
        if option is None:
            return field.replace("_", " ") if field in cls.model_fields else f"{{{field}}}"
        return option.flag or option.metavar or field

    line = error.worded(name_of)
    option = options.get(error.field or "")
    if error.unset and option is not None and option.flag is not None:
        given = f"{option.flag} {option.metavar}" if option.metavar else option.flag
        where = f" or set TUI_AGENT_{error.field.upper()}" if option.setting and error.field else ""
        line = f"{line}: pass {given}{where}"
    return line


@contextmanager
def for_the_shell(cls: type[RequestBase]) -> Iterator[None]:
    """Say a RequestError about a `cls` request as a UsageError in a shell's words."""
    try:
        yield
    except RequestError as error:
        raise UsageError(shell_line(error, cls)) from None


def record_command(cls: type[RequestBase]) -> Handler:
    """The handler of a command that starts a `cls` session from its arguments."""

    def handle(args: argparse.Namespace, settings: Settings) -> int:
        with for_the_shell(cls):
            request = request_from_args(cls, args)
            code, _ = record_request(settings, request, args.output)
        return code

    return handle
