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


# the readers and the output check live in `zabmc.core.files`; these names stay for old imports
def read_text(path: str, what: str) -> str:
    from .files import read_text as read

    return read(path, what)


def parse_json(text: str, what: str):
    from .files import parse_json as parse

    return parse(text, what)


def check_outputs(outputs: dict, inputs: dict | None = None, **kw) -> None:
    from .files import check_outputs as check

    return check(outputs, inputs, **kw)
