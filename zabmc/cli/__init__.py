"""The `zabmc` command line: one click group, one module per command.

`main()` owns error handling and exit codes for every command:
0 success / no violation (or the reader of stdout went away early), 10 a property violation,
2 bad usage or input (one line, no traceback), 1 an internal error (one line; `ZABMC_DEBUG=1`
shows the traceback), 130 interrupted.
"""

from __future__ import annotations

import io
import os
import re
import sys
from contextlib import contextmanager

import click

from zabmc.core.errors import UsageError, ZabmcError

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_VIOLATION = 10
EXIT_INCOMPLETE = 4  # check --require-complete: a clean run that did not exhaust its space


@click.group(context_settings={"help_option_names": ["-h", "--help"]},
             invoke_without_command=True)
@click.version_option(package_name="zabmc", prog_name="zabmc")
@click.pass_context
def cli(ctx) -> None:
    """zabmc: an explicit-state model checker for ZooKeeper's atomic broadcast (ZAB).

    Exit codes: 0 no violation, 10 property violation, 2 bad usage or input, 1 internal error,
    130 interrupted, 143 terminated.
    """
    if ctx.invoked_subcommand is None:  # bare `zabmc`: the command list, as `zabmc --help`
        click.echo(ctx.get_help())


def _register() -> None:
    from . import simulate as _simulate  # noqa: F401  (each module adds its command to `cli`)

    for name in ("check", "replay", "invariants", "models", "export", "sweep", "graph", "mutate",
                 "real", "gate"):
        try:
            __import__(f"zabmc.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"zabmc.cli.{name}":
                raise


class ReaderGone(Exception):
    """The reader of stdout went away (`zabmc ... | head`). Not an OSError, so that neither rich
    (which would exit 1) nor click catches it: it unwinds the command to `main`, which exits 0, or
    to a command that already knows its verdict and keeps its code (`zabmc check`'s report)."""


class _Stdout:
    """sys.stdout while a command runs: the first write or flush that meets a closed pipe points
    fd 1 at /dev/null (so that nothing fails again, at exit either) and raises `ReaderGone`; within
    `run_to_the_verdict()`, it returns instead and the command runs on."""

    def __init__(self, stream):
        self._stream = stream
        self.run_on = False

    def _gone(self) -> ReaderGone:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass
        if not self.run_on:
            raise ReaderGone()

    def write(self, s):
        try:
            return self._stream.write(s)
        except BrokenPipeError:
            self._gone()
            return len(s)

    def flush(self):
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextmanager
def run_to_the_verdict():
    """Within: a reader that goes away early does not stop the command; the rest of its output
    goes to /dev/null and it exits with its verdict's code (`zabmc check`: the search's verdict is
    what its exit code says, whoever reads the output)."""
    out = sys.stdout
    if not isinstance(out, _Stdout):
        yield
        return
    old, out.run_on = out.run_on, True
    try:
        yield
        out.flush()
    finally:
        out.run_on = old


def invoked_words() -> list | None:
    """The words the running command was invoked with (after `zabmc`), or None outside `main`."""
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    return list(obj["argv"]) if isinstance(obj, dict) and "argv" in obj else None


_LONG_WORD = re.compile(r"\S{161,}")


def _clamp(word: re.Match) -> str:
    w = word.group(0)
    return f"{w[:60]}...[{len(w) - 120:,} characters left out]...{w[-60:]}"


def _fail(code: int, message: str) -> int:
    """The one line of an error: a word of the user's (a value, a path) of over 160 characters
    shows its two ends, so that the line stays one a terminal can show."""
    click.echo(f"zabmc: error: {_LONG_WORD.sub(_clamp, message)}", err=True)
    return code


def main(argv: list[str] | None = None) -> None:
    from zabmc.explore.search import Terminated

    _register()
    stdout = sys.stdout
    sys.stdout = _Stdout(stdout)
    try:
        words = list(sys.argv[1:] if argv is None else argv)
        rv = cli.main(args=words, prog_name="zabmc", standalone_mode=False, obj={"argv": words})
        sys.stdout.flush()
    except click.exceptions.Exit as e:
        rv = e.exit_code
    except click.exceptions.Abort as e:
        # click turns an EOFError into Abort as it does Ctrl-C: only the latter is an interruption
        if not isinstance(e.__context__, EOFError):
            rv = 130
        elif os.environ.get("ZABMC_DEBUG"):
            raise
        else:
            rv = _fail(EXIT_INTERNAL, "internal error: EOFError: "
                       f"{e.__context__} (set ZABMC_DEBUG=1 for the traceback)")
    except click.UsageError as e:
        msg = e.format_message().strip().splitlines()[0]
        rv = _fail(EXIT_USAGE, msg)
    except click.ClickException as e:
        rv = _fail(EXIT_USAGE, e.format_message().strip().splitlines()[0])
    except UsageError as e:
        rv = _fail(EXIT_USAGE, str(e))
    except KeyboardInterrupt:
        rv = _fail(130, "interrupted")
    except Terminated:  # SIGTERM outside a search's own handling: before it starts, say
        rv = _fail(143, "terminated (SIGTERM)")
    except ReaderGone:  # the reader went away early: not a failure
        rv = EXIT_OK
    except (ZabmcError, Exception) as e:  # internal: one line unless asked for the traceback
        if os.environ.get("ZABMC_DEBUG"):
            raise
        rv = _fail(EXIT_INTERNAL, f"internal error: {type(e).__name__}: {e} "
                   "(set ZABMC_DEBUG=1 for the traceback)")
    finally:
        sys.stdout = stdout
    sys.exit(rv if isinstance(rv, int) else 0)
