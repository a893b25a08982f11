"""The one root of every error zabmc raises on purpose, and its few kinds.

The CLI turns a `UsageError` (bad flags, files, scripts) into a one-line message and exit code 2;
any other `ZabmcError` is an internal failure (exit 1) reported with context, never a traceback.
"""


import json
import sys


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


def parse_json(text: str, what: str):
    """The JSON value of `text`, from the user's `what` ("trace file T"). Two failures of Python's
    reader that are not `json.JSONDecodeError` become a one-line `UsageError` here: a number of
    more digits than Python converts (4,300 by default), and nesting deeper than its recursion
    limit. A JSONDecodeError propagates, for the caller to place in its own terms (line, column)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError as e:  # int("9" * 5000): Python refuses integers that long
        if "digits" not in str(e):
            raise UsageError(f"{what} is not valid JSON: {str(e).splitlines()[0][:120]}") from None
        raise UsageError(f"{what} is not usable JSON: a number has more than "
                         f"{sys.get_int_max_str_digits()} digits") from None
    except RecursionError:
        raise UsageError(f"{what} is not usable JSON: it nests arrays or objects too "
                         "deeply") from None
