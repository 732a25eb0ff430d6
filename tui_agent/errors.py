"""The one base class of errors a user can cause, by input or by environment.

A `UserError`'s message is the one line to show (what was wrong, what to do), with no secret in
it. The CLI prints it and exits 1; the TUI shows it where the user acted. Anything else that
escapes is a bug and is reported as one.
"""

from __future__ import annotations


class UserError(Exception):
    """Bad input or an environment that cannot do what was asked; `str(error)` is one line."""
