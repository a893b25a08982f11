"""Option parsing shared by several commands: partitions, and the option groups of the commands
that build a `zabmc.spec.CheckSpec` (check, graph)."""

from __future__ import annotations

import math

import click

from zabmc.core.errors import UsageError
from zabmc.spec import ENGINES, REDUCTIONS, STRATEGY_NAMES, CheckSpec


class FiniteFloat(click.FloatRange):
    """A float option's value: a finite number, within the range if one is given (`nan` and `inf`
    are refused: nan compares false with every bound, so it would slip past each range check and
    mean "never")."""

    def convert(self, value, param, ctx):
        x = super().convert(value, param, ctx)
        if not math.isfinite(x):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return x

    def _describe_range(self) -> str:
        """No range to show in --help when there is none (click would print `x<=None`)."""
        if self.min is None and self.max is None:
            return ""
        return super()._describe_range()


FLOAT = FiniteFloat()


# --- the option groups of the commands that build a `zabmc.spec.CheckSpec` ------------------------
# Each flag is declared once, here, with its default taken from `CheckSpec` (one default per
# option); a command stacks the groups it takes and hands click's parameters to `CheckSpec`.
_D = CheckSpec()


def _stack(*decorators):
    def apply(f):
        for d in reversed(decorators):
            f = d(f)
        return f

    return apply


class SectionedCommand(click.Command):
    """A command whose `--help` lists its options in titled sections (`section()` tags them;
    the rest, --help among them, go last under "Other options")."""

    def format_options(self, ctx, formatter) -> None:
        sections: dict = {}
        for param in self.get_params(ctx):
            row = param.get_help_record(ctx)
            if row is not None:
                sections.setdefault(getattr(param, "help_section", "Other options"), []).append(row)
        other = sections.pop("Other options", [])
        for title, rows in [*sections.items(), ("Other options", other)]:
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def section(title: str, *decorators):
    """Stack `decorators` (click options) and file their options under `title` in the help of a
    `SectionedCommand`."""
    def apply(f):
        before = len(getattr(f, "__click_params__", ()))
        f = _stack(*decorators)(f)
        for param in f.__click_params__[before:]:
            param.help_section = title
        return f

    return apply


def _models_help() -> str:
    from zabmc.core.model import aliases, model_names

    return (f"Protocol model: {', '.join(model_names())}; also named: "
            f"{', '.join(aliases())} (`zabmc models` says what each is).")


def model_option(default: str = _D.model, help: str | None = None):
    return click.option("--model", "model", default=default, show_default=True,
                        help=help or _models_help())


def _int(flag: str, help: str):
    """An integer option whose CheckSpec field is the flag's name, with that field's default."""
    return click.option(flag, type=int, default=getattr(_D, flag[2:].replace("-", "_")),
                        show_default=True, help=help)


def bounds_options():
    """--nodes, --depth, --network and the budgets."""
    return _stack(
        _int("--nodes", "Cluster size."),
        _int("--depth", "Bound on events per path."),
        click.option("--network", type=click.Choice(["bag", "fifo"]), default=_D.network,
                     show_default=True,
                     help="bag: any in-flight message may arrive next (the simulator's 1-3 tick "
                          "delays); fifo: per-link order (TCP)."),
        _int("--max-drops", "Message drops budget."),
        _int("--max-timeouts", "Election timeouts budget (shared by all nodes)."),
        _int("--max-heartbeats", "Heartbeats budget."),
        _int("--proposals", "Client proposals budget."),
        _int("--max-crashes", "Crashes budget (shared by all nodes): a crash keeps only the "
                              "node's durable fields; restarts are unbudgeted."),
    )


def start_options():
    """--from and --scenario: where the search starts."""
    return _stack(
        click.option("--from", "start_from", default=None, metavar="TRACE[:K]",
                     help="Search from the state after the first K events (default: all) of a "
                          "trace that `zabmc replay` confirms, of this node count and network, "
                          "whose first K events are a run of this model (the trace may be "
                          "another model's). --depth counts events after that state; each budget is what "
                          "is left there (a TLC initial state). A counterexample holds the K "
                          "events first: it replays from the initial state like any other "
                          "(docs/check.md, \"Searching from a state\")."),
        click.option("--scenario", default=None, metavar="NAME",
                     help="Search from a named state the model ships, as --from its trace "
                          "(`zabmc models --scenarios` lists them)."),
    )


def property_options():
    """--invariant and --no-invariants."""
    return _stack(
        click.option("--invariant", "invariants", multiple=True, metavar="NAME",
                     help="Check only this property (repeatable); see `zabmc invariants`. A "
                          "property the model's runs cannot break is refused (exit 2), with "
                          "the models where it can."),
        click.option("--no-invariants", is_flag=True,
                     help="Check nothing and keep no ghost state: the distinct-state count is "
                          "then the protocol's own (docs/semantics.md, E6)."),
    )


def strategy_options():
    """--strategy and its options, --all, --reduction."""
    return _stack(
        click.option("--strategy", type=click.Choice(list(STRATEGY_NAMES)), default=_D.strategy,
                     show_default=True,
                     help="bfs: shortest counterexamples; dfs: memory = the path; random: seeded "
                          "walks."),
        _int("--seed", "Seed for --strategy random (an unsigned 64-bit integer, as zabmc "
                       "simulate's)."),
        _int("--walks", "Walks for --strategy random."),
        click.option("--no-shorten", is_flag=True,
                     help="Keep dfs/random counterexamples as found (default: shorten them by "
                          "replay)."),
        click.option("--all", "find_all", is_flag=True,
                     help="Do not stop at the first violation; report each violated property "
                          "once."),
    )


def output_options():
    """--trace-out, --json, --html, -q."""
    return _stack(
        click.option("--trace-out", type=click.Path(dir_okay=False), default=None,
                     help="Counterexample trace file [default: "
                          "zabmc-<model>-<property>.trace.json]; with --all, or when one step "
                          "breaks several properties, FILE-<property>.json per property "
                          "(/dev/null takes them all). An existing trace is replaced; any other file "
                          "only with --force."),
        click.option("--json", "as_json", is_flag=True, help="Print a machine-readable summary."),
        click.option("--html", "html_out", default=None, metavar="FILE",
                     help="Draw the counterexample as a sequence chart in one self-contained HTML "
                          "file (with --all, FILE-<property>.html per run of events)."),
        click.option("--quiet", "-q", is_flag=True, help="No progress display."),
    )


def engine_options():
    """--time-limit, --engine and Spark's options."""
    return _stack(
        click.option("--time-limit", type=FLOAT, default=None, metavar="SECONDS",
                     help="Stop after this long and report the partial result."),
        click.option("--engine", type=click.Choice(ENGINES), default=_D.engine,
                     show_default=True),
        click.option("--workers", type=int, default=_D.workers, show_default=True, metavar="N",
                     help="in-process bfs: expand each level on N forked processes (one per "
                          "core); the same states, counts and counterexamples as one process. "
                          "Levels stay in memory; --reduction por works, por+sleep does not."),
        click.option("--master", default=_D.master, show_default=True, help="Spark master URL."),
        click.option("--partitions", type=int, default=None,
                     help="Spark partitions [default: cores]."),
        click.option("--verbose", is_flag=True, help="Show engine logs (Spark start-up output)."),
    )


_CHECKPOINT_HELP = (
    "bfs: write checkpoints into DIR (atomically; the last good one survives a kill at any "
    "instant), at level boundaries only, at most every --checkpoint-every seconds, and a last one "
    "when the search ends or is interrupted; --resume DIR continues from there. With --engine "
    "spark, DIR serves both losses: Spark's reliable checkpoints cut the lineage every 10 levels "
    "(a lost executor's work is rebuilt from there), and every task writes its partition's part "
    "of a level snapshot at most every --checkpoint-every seconds, sealed by a manifest once the "
    "level is done (a lost driver loses only the levels since). DIR must be storage the driver "
    "and every executor see at the same path (on a cluster, a shared file system; a URL such as "
    "hdfs://... gets the lineage cuts only).")


def long_run_options():
    """Checkpoints, resume, levels on disk."""
    return _stack(
        click.option("--checkpoint", "checkpoint_dir", type=click.Path(file_okay=False),
                     default=None, metavar="DIR", help=_CHECKPOINT_HELP),
        click.option("--checkpoint-every", type=FLOAT, default=_D.checkpoint_every,
                     show_default=True, metavar="SECONDS",
                     help="Seconds between two checkpoints (taken at the first level boundary "
                          "after; 0: at every level boundary)."),
        click.option("--resume", "resume_dir", type=click.Path(file_okay=False), default=None,
                     metavar="DIR",
                     help="bfs: continue the search checkpointed in DIR; the other flags must be "
                          "the ones it was started with (the engine and --partitions may differ). "
                          "Keeps checkpointing into DIR unless --checkpoint names another "
                          "directory. --engine spark resumes a checkpoint of either engine; the "
                          "in-process engine resumes only its own (a Spark snapshot has no parent "
                          "table)."),
        click.option("--force", is_flag=True,
                     help="Let --checkpoint DIR replace a checkpoint already there (without it, a "
                          "run that does not --resume that checkpoint is refused), and "
                          "--trace-out and --html replace an existing file that is not a trace "
                          "or a picture zabmc wrote (without it, refused)."),
        click.option("--spill-dir", default=None, metavar="DIR",
                     help="bfs: where levels that do not fit go [default: $TMPDIR]; directories "
                          "left there by runs killed with SIGKILL are removed."),
        click.option("--memory-limit", default=None, metavar="SIZE",
                     help="bfs: memory the search may count on (e.g. 800M, 2G; 'none': keep every "
                          "level in memory) [default: half of MemAvailable]. A level whose states "
                          "would take more than a quarter of it, and at most 256 MiB, goes to disk "
                          "(compressed segment files in $TMPDIR) and is read back when it is "
                          "expanded; the visited set stays in memory (22 bytes a state)."),
    )


def check_options():
    """Every flag of `zabmc check`, in sections."""
    return _stack(
        section("Model and bounds", model_option(), bounds_options(), start_options()),
        section("Properties", property_options(),
                click.option("--liveness", is_flag=True,
                             help="Check liveness instead of safety: once faults stop, a leader "
                                  "is elected (eventually-leader) and its transactions are "
                                  "delivered (eventually-commit); counterexamples are lassos "
                                  "(docs/liveness.md)."),
                click.option("--require-complete", is_flag=True,
                             help="Exit 4 when no violation is found but the search stopped "
                                  "before exhausting its space (depth bound, --max-states, "
                                  "--time-limit): for CI gates meant to exhaust.")),
        section("Search", strategy_options(),
                click.option("--reduction", type=click.Choice(list(REDUCTIONS)),
                             default=_D.reduction, show_default=True,
                             help="por: partial-order reduction (stubborn sets; fifo, bfs, "
                                  "in-process): an exhausted reduced space has the full one's "
                                  "verdict with fewer states; por+sleep: the same states, fewer "
                                  "transitions built (sleep sets; docs/reduction.md)."),
                click.option("--symmetry", is_flag=True,
                             help="Explore one state per orbit of the permutations the model "
                                  "declares (in-process bfs or dfs): the client payloads "
                                  "proposed so far, in every model here; node ids in none, since "
                                  "elections break ties by id. Same verdicts; counterexamples are "
                                  "real runs. Payloads are named in proposal order, so few states "
                                  "share an orbit; with a property that keeps that order "
                                  "(integrity, local-primary-order) none do, and it is refused "
                                  "(docs/check.md, \"Symmetry\")."),
                click.option("--max-states", type=int, default=None, metavar="N",
                             help="--liveness: stop after N states [default: 1,000,000]; "
                                  "--strategy dfs: stop at the first distinct state beyond N "
                                  "[default: no cap]. The verdict is then partial.")),
        section("Output", output_options()),
        section("Engine and time limit", engine_options()),
        section("Long runs: checkpoints and memory (bfs)", long_run_options()),
    )


def spec_of(params: dict, **fixed) -> CheckSpec:
    """The `CheckSpec` of a command's click parameters (tuples for repeated flags)."""
    kw = {k: v for k, v in params.items() if k in _FIELDS}
    if "invariants" in kw:
        kw["invariants"] = tuple(kw["invariants"])
    return CheckSpec(**kw, **fixed)


_FIELDS = {f for f in CheckSpec.__dataclass_fields__}
