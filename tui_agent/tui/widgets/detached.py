"""Updates that meet a widget taken off the screen while they awaited (the user went back
or quit while a card was being brought up to date) end quietly."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Concatenate, ParamSpec, TypeVar

from textual.widget import MountError, Widget

W = TypeVar("W", bound=Widget)
P = ParamSpec("P")


def quiet_when_detached(
    method: Callable[Concatenate[W, P], Awaitable[None]],
) -> Callable[Concatenate[W, P], Awaitable[None]]:
    """An async update method that ends without a word when its widget is no longer on a
    screen and so cannot mount what it wanted to; a MountError while attached still raises."""

    @functools.wraps(method)
    async def update(self: W, *args: P.args, **kwargs: P.kwargs) -> None:
        try:
            await method(self, *args, **kwargs)
        except MountError:
            if self.is_attached:
                raise

    return update
