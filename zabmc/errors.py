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


def read_text(path: str, what: str) -> str:
    """The UTF-8 text of the file the user named as `what` ("trace file", "partition script"),
    or a `UsageError` naming what is wrong with it; a file that is not UTF-8 raises
    UnicodeDecodeError, for the caller to name in its own terms."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise UsageError(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise UsageError(f"{what} {path} is a directory") from None
    except UnicodeDecodeError:
        raise
    except OSError as e:
        raise UsageError(f"cannot read {what} {path}: {e.strerror}") from None
