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
@click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True, metavar="N",
              help="Runs at once, each in its own process; their reports are printed in the "
                   "gate's order, whole, as each is done.")
def gate(as_list, model_name, jobs):
    """Run the CI invariant gate: each `zabmc check` of `zabmc gate --list` in turn, each printing
    its summary, stopping at the first that fails, with its exit code (10: a violation, its
    counterexample printed and saved; 4: a --require-complete run that did not exhaust its space).
    With --jobs N, N runs go at once and the first failure in the gate's order stops the rest.
    `make gate` and `make test` run this; `zabmc mutate --run` scores mutants against the same
    runs."""
    from zabmc.gate import command, runs

    chosen = runs(model_name)
    if as_list:
        for run in chosen:
            click.echo(command(run))
        return EXIT_OK
    argvs = [[sys.executable, "-m", "zabmc", "check", *run.split(), "-q"] for run in chosen]
    results = _run_each(argvs) if jobs == 1 else _run_at_once(argvs, jobs)
    for k, (run, code) in enumerate(zip(chosen, results), 1):
        if code != EXIT_OK:
            click.echo(f"zabmc: gate run {k} of {len(chosen)} failed with exit code {code}: "
                       f"{command(run)}", err=True)
            return code
    click.echo(f"gate passed: {len(chosen)} runs")
    return EXIT_OK


def _run_each(argvs):
    """The runs one after the other, each printing as it goes; yields each exit code, and the
    caller stops at the first failure (so later runs never start)."""
    for argv in argvs:
        click.echo(command_of(argv))
        yield _run(argv)


def command_of(argv: list) -> str:
    return "zabmc " + " ".join(argv[3:])


def _run_at_once(argvs, jobs: int):
    """Up to `jobs` runs at once, each child's output (stdout and stderr together) in a file of
    its own, printed whole in the gate's order once that run and every earlier one are done;
    yields each exit code in order. After the first failure in order no run starts and the
    running ones are stopped by their pid (SIGTERM: each reports and exits). A SIGTERM to the gate
    is passed on to every child."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="zabmc-gate-") as tmp:
        started: list = []  # (Popen, its output file), in the gate's order
        logs = [open(f"{tmp}/{k}.out", "w+b") for k in range(len(argvs))]

        def start(k):
            sys.stdout.flush()
            started.append(subprocess.Popen(argvs[k], stdout=logs[k], stderr=subprocess.STDOUT))

        def forward(signum, frame):
            for child in started:
                if child.poll() is None:
                    child.send_signal(signum)

        old = _trap(forward)
        try:
            for k in range(min(jobs, len(argvs))):
                start(k)
            for k in range(len(argvs)):
                code = _wait(started[k])
                click.echo(command_of(argvs[k]))
                logs[k].seek(0)
                click.echo(logs[k].read().decode(errors="replace"), nl=False)
                if code != EXIT_OK:
                    forward(signal.SIGTERM, None)
                    for child in started:
                        _wait(child)
                    yield code
                    return
                if len(started) < len(argvs):
                    start(len(started))
                yield code
        finally:
            _untrap(old)
            for f in logs:
                f.close()


def _trap(handler):
    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        return None


def _untrap(old) -> None:
    if old is not None:
        signal.signal(signal.SIGTERM, old)


def _wait(child) -> int:
    """The child's exit code; a Ctrl-C reaches it too, which stops, reports and exits 130."""
    while True:
        try:
            return child.wait()
        except KeyboardInterrupt:  # the run got it too: wait for its partial report
            continue


def _run(argv: list) -> int:
    """One run in a process of its own (its own memory figures, as under make). A Ctrl-C reaches
    the run too, which stops, reports and exits 130; a SIGTERM to the gate is passed on to it."""
    sys.stdout.flush()
    child = subprocess.Popen(argv)

    def forward(signum, frame):
        child.send_signal(signum)

    old = _trap(forward)
    try:
        return _wait(child)
    finally:
        _untrap(old)
