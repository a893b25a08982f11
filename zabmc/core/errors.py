"""The one root of every error zabmc raises on purpose, and its few kinds.

The CLI turns a `UsageError` (bad flags, files, scripts) into a one-line message and exit code 2;
any other `ZabmcError` is an internal failure (exit 1) reported with context, never a traceback.
"""


import json
import os
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
        # a byte order mark, which some Windows editors write, is no part of the document (as in
        # partition scripts)
        return json.loads(text.removeprefix("\ufeff"))
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


def check_outputs(outputs: dict, inputs: dict | None = None) -> None:
    """Before a command works: each file it will write (`outputs`: flag -> path, None for an
    output not asked for) can be written, in a directory that exists, and is not a directory; no
    two outputs are the same file (but /dev/null), and no output is one of the files it reads
    (`inputs`: what -> path). A one-line `UsageError` names the first that is wrong."""
    seen: dict = {}  # real path -> flag
    for flag, path in outputs.items():
        if path is None:
            continue
        real = os.path.realpath(path)
        where = os.path.dirname(path) or "."
        if os.path.isdir(real):
            raise UsageError(f"{flag} {path} is a directory")
        if not os.path.isdir(os.path.dirname(real)):
            there = "is not a directory" if os.path.exists(os.path.dirname(real)) else \
                "does not exist"
            raise UsageError(f"{flag} {path}: the directory {where} {there}")
        if not os.access(os.path.dirname(real), os.W_OK | os.X_OK):
            raise UsageError(f"{flag} {path}: the directory {where} is not writable")
        if os.path.exists(real) and not os.access(real, os.W_OK):
            raise UsageError(f"{flag} {path} is not writable")
        if real in seen and real != os.devnull:  # several outputs may all be thrown away
            raise UsageError(f"{seen[real][0]} and {flag} name the same file {path}: give each "
                             "its own")
        seen[real] = (flag, path)
    for what, path in (inputs or {}).items():
        if path is None or not os.path.exists(path):
            continue
        for real, (flag, out) in seen.items():
            if os.path.exists(real) and os.path.samefile(real, path):
                same = "" if out == path else f" ({path})"
                raise UsageError(f"{flag} {out} is the {what}{same} this command reads: it would "
                                 "be overwritten; choose another file")
