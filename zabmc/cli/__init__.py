"""The `zabmc` command line: one click group, one module per command.

`main()` owns error handling and exit codes for every command:
0 success / no violation, 10 a property violation, 2 bad usage or input (one line, no traceback),
1 an internal error (one line; `ZABMC_DEBUG=1` shows the traceback), 130 interrupted.
"""

from __future__ import annotations

import os
import sys

import click

from zabmc.errors import UsageError, ZabmcError

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


def _fail(code: int, message: str) -> int:
    click.echo(f"zabmc: error: {message}", err=True)
    return code


def main(argv: list[str] | None = None) -> None:
    _register()
    try:
        rv = cli.main(args=argv, prog_name="zabmc", standalone_mode=False)
    except click.exceptions.Exit as e:
        rv = e.exit_code
    except click.exceptions.Abort:
        rv = 130
    except click.UsageError as e:
        msg = e.format_message().strip().splitlines()[0]
        rv = _fail(EXIT_USAGE, msg)
    except click.ClickException as e:
        rv = _fail(EXIT_USAGE, e.format_message().strip().splitlines()[0])
    except UsageError as e:
        rv = _fail(EXIT_USAGE, str(e))
    except KeyboardInterrupt:
        rv = _fail(130, "interrupted")
    except BrokenPipeError:
        rv = 0
    except (ZabmcError, Exception) as e:  # internal: one line unless asked for the traceback
        if os.environ.get("ZABMC_DEBUG"):
            raise
        rv = _fail(EXIT_INTERNAL, f"internal error: {type(e).__name__}: {e} "
                   "(set ZABMC_DEBUG=1 for the traceback)")
    sys.exit(rv if isinstance(rv, int) else 0)
