"""`zabmc gate`: the CI invariant gate (`zabmc.gate`), run by run."""

from __future__ import annotations

import signal
import subprocess
import sys

import click

from . import EXIT_OK, cli


@cli.command()
@click.option("--list", "as_list", is_flag=True, help="Print the gate's commands and run nothing.")
@click.option("--model", "model_name", default=None, metavar="M",
              help="Only the runs of model M [default: every run].")
def gate(as_list, model_name):
    """Run the CI invariant gate: each `zabmc check` of `zabmc gate --list` in turn, each printing
    its summary, stopping at the first that fails, with its exit code (10: a violation, its
    counterexample printed and saved; 4: a --require-complete run that did not exhaust its space).
    `make gate` and `make test` run this; `zabmc mutate --run` scores mutants against the same
    runs."""
    from zabmc.gate import command, runs

    chosen = runs(model_name)
    if as_list:
        for run in chosen:
            click.echo(command(run))
        return EXIT_OK
    for k, run in enumerate(chosen, 1):
        click.echo(command(run))
        code = _run([sys.executable, "-m", "zabmc", "check", *run.split(), "-q"])
        if code != EXIT_OK:
            click.echo(f"zabmc: gate run {k} of {len(chosen)} failed with exit code {code}: "
                       f"{command(run)}", err=True)
            return code
    click.echo(f"gate passed: {len(chosen)} runs")
    return EXIT_OK


def _run(argv: list) -> int:
    """One run in a process of its own (its own memory figures, as under make). A Ctrl-C reaches
    the run too, which stops, reports and exits 130; a SIGTERM to the gate is passed on to it."""
    sys.stdout.flush()
    child = subprocess.Popen(argv)

    def forward(signum, frame):
        child.send_signal(signum)

    try:
        old = signal.signal(signal.SIGTERM, forward)
    except ValueError:  # not the main thread
        old = None
    try:
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:  # the run got it too: wait for its partial report
                continue
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
