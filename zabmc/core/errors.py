"""The one root of every error zabmc raises on purpose, and its few kinds.

The CLI turns a `UsageError` (bad flags, files, scripts) into a one-line message and exit code 2;
any other `ZabmcError` is an internal failure (exit 1) reported with context, never a traceback.
"""


class ZabmcError(Exception):
    """Root of all zabmc errors."""


class UsageError(ZabmcError):
    """The user's input (flags, files, scripts, configs) is invalid; the message names the problem."""


class NondeterminismError(ZabmcError):
    """Replaying a recorded event path did not reproduce the recorded states."""
