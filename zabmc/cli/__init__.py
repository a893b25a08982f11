"""The `zabmc` command line: one click group, one module per command.

`main()` owns error handling and exit codes for every command:
0 success / no violation (or the reader of stdout went away early), 10 a property violation,
2 bad usage or input, or an output that could not be written (one line, no traceback; a
command with a verdict keeps its verdict's code), 1 an internal error (one line;
`ZABMC_DEBUG=1` shows the traceback), 3 `zabmc export` reproduced nothing, 4 `check
--require-complete` incomplete, 130 interrupted (SIGINT), 143 terminated (SIGTERM).
"""

from __future__ import annotations

import os
import sys

if os.path.basename(sys.argv[0] or "") == "zabmc":  # the console script: handlers before imports
    from zabmc.core.signals import install_early

    install_early()

import io  # noqa: E402 - after the signal handlers, on purpose
import re  # noqa: E402
from contextlib import contextmanager  # noqa: E402

import click  # noqa: E402

from zabmc.core import files  # noqa: E402
from zabmc.core.errors import UsageError, ZabmcError  # noqa: E402
from zabmc.core.signals import Terminated, end_interrupted, raising  # noqa: E402

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

    Exit codes: 0 no violation, 10 property violation, 2 bad usage or input (or an output that
    could not be written: a command with a verdict keeps its code), 1 internal error, 3 `zabmc
    export` reproduced nothing within its budget, 4 `zabmc check --require-complete` did not
    exhaust its space, 130 interrupted (SIGINT), 143 terminated (SIGTERM).
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
    `run_to_the_verdict()`, it returns instead and the command runs on. Any other failure to write
    (a full disk, an I/O error, a standard output that was closed) is noted in `failed` and the
    command runs on, its output thrown away: `main` says so in one line and keeps the verdict's
    exit code."""

    def __init__(self, stream, closed: bool = False):
        self._stream = stream
        self.run_on = False
        self.closed_at_start = closed
        self.failed: str | None = None
        self.reported = False  # an error line has named the failure already

    def _to_devnull(self) -> None:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass

    def _gone(self) -> ReaderGone:
        self._to_devnull()
        if not self.run_on:
            raise ReaderGone()

    def _failed(self, e: OSError) -> None:
        if self.failed is None:
            self.failed = e.strerror or str(e)
        self._to_devnull()

    def write(self, s):
        if self.closed_at_start and self.failed is None and s:
            self.failed = "it is closed"
        try:
            return self._stream.write(s)
        except BrokenPipeError:
            self._gone()
            return len(s)
        except OSError as e:
            self._failed(e)
            return len(s)

    def flush(self):
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()
        except OSError as e:
            self._failed(e)
            try:  # what the buffer still holds goes to /dev/null now
                self._stream.flush()
            except OSError:
                pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _standard_fds() -> bool:
    """fds 0, 1 and 2 that were closed (`zabmc ... >&-`) are opened on /dev/null, so that no file
    zabmc opens takes their place (a trace file written by `print`); whether stdout was closed."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    if 2 in closed or sys.stderr is None:
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
    if 1 in closed or sys.stdout is None:
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False))
        return True
    return False


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
    with raising() as signals:  # from here to the exit code: SIGINT 130, SIGTERM 143
        rv = _main(argv, signals)
    rv = rv if isinstance(rv, int) else 0
    end_interrupted(rv, signals)  # the command line's process, after a signal: ends here
    sys.exit(rv)


def _main(argv, signals) -> int:
    closed = _standard_fds()
    stdout = sys.stdout
    sys.stdout = out = _Stdout(stdout, closed)
    try:
        files.new_run()
        _register()
        words = list(sys.argv[1:] if argv is None else argv)
        rv = cli.main(args=words, prog_name="zabmc", standalone_mode=False, obj={"argv": words})
        sys.stdout.flush()
    except click.exceptions.Exit as e:
        rv = e.exit_code
    except click.exceptions.Abort as e:
        # click turns an EOFError into Abort as it does Ctrl-C: only the latter is an interruption
        if not isinstance(e.__context__, EOFError):  # (click has ended the ^C line)
            rv = _fail(130, "interrupted")
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
    rv = rv if isinstance(rv, int) else 0
    if out.failed is not None and not out.reported:  # the output is lost: say so; never exit 0
        _fail(EXIT_USAGE, f"cannot write standard output: {out.failed}")
        rv = rv if rv != EXIT_OK else EXIT_USAGE
    if signals.got and rv == EXIT_OK:  # a signal the command swallowed: never exit 0
        rv = 128 + int(signals.got[0])
    return rv
