"""One check as one value: `CheckSpec` (issue #35 point 1).

A `CheckSpec` holds everything a run of `zabmc check` is made of: the model's name, the bounds,
the properties (safety, or liveness), the strategy and its options, the engine, the limits and the
outputs. `validate()` applies every rule that ties options together, once, with the one-line
errors the command line has always printed; `run(observer)` builds the environment and the
engine's options and runs the search. `zabmc check`, `zabmc graph`, `zabmc mutate` (through
`zabmc.gate`), the findings report and the benchmarks all build one; click only maps flags to its
fields (`zabmc.cli.options`), and the defaults below are the flags' defaults.

Layering: this module sits above `zabmc.explore` (which never imports models) and reaches models
only through the `zabmc.core.model` registry.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from zabmc.core.errors import UsageError
from zabmc.strategies import STRATEGIES

ENGINES = ("in-process", "spark")
STRATEGY_NAMES = tuple(STRATEGIES)
#: zabmc.explore.por.REDUCTIONS, not imported from there: that would load the explorer at start-up
REDUCTIONS = ("none", "por", "por+sleep")
BOUNDS = ("nodes", "network", "max_drops", "max_timeouts", "max_heartbeats", "proposals", "depth",
          "max_crashes")  # ExploreConfig's fields, in its order


@dataclass(frozen=True)
class CheckSpec:
    """A check: what to explore, what to check there, how, and what to write."""

    # the model
    model: str = "db19"
    # bounds: ExploreConfig's fields again, written out flat (deliberately: one field a flag, so
    # that click maps flags to fields one to one); tests/test_spec.py checks that the names and
    # defaults stay ExploreConfig's
    nodes: int = 3
    depth: int = 40
    network: str = "fifo"
    max_drops: int = 0
    max_timeouts: int = 0
    max_heartbeats: int = 0
    proposals: int = 2
    max_crashes: int = 0
    #: where the search starts (`--from TRACE[:K]`, `--scenario NAME`; None: the initial state):
    #: the state after the first K events of a trace replay confirms, the bounds above counted
    #: from there (zabmc.explore.start)
    start_from: str | None = None
    scenario: str | None = None
    # properties: the safety ones of zabmc.invariants, or with `liveness` those of
    # zabmc.explore.liveness (`invariants` names them; empty: the defaults)
    invariants: tuple = ()
    no_invariants: bool = False
    liveness: bool = False
    # the strategy and its options
    strategy: str = "bfs"
    seed: int = 0
    walks: int = 1000
    find_all: bool = False
    no_shorten: bool = False
    reduction: str = "none"
    #: one state per orbit of the model's declared permutations (zabmc.explore.symmetry)
    symmetry: bool = False
    max_states: int | None = None
    # the engine
    engine: str = "in-process"
    #: in-process breadth-first search on this many processes (zabmc.explore.parallel)
    workers: int = 1
    master: str = "local[*]"
    partitions: int | None = None
    verbose: bool = False
    # limits
    time_limit: float | None = None
    require_complete: bool = False
    memory_limit: str | None = None
    spill_dir: str | None = None
    checkpoint_dir: str | None = None
    checkpoint_every: float = 300.0
    resume_dir: str | None = None
    #: --checkpoint may replace a checkpoint already in its directory (one this run does not resume)
    force: bool = False
    # outputs
    trace_out: str | None = None
    as_json: bool = False
    html_out: str | None = None
    quiet: bool = False
    #: "check", or "graph" (`zabmc graph`: the state graph of the same bounds and properties,
    #: refused above `max_states`; its own, shorter rules)
    purpose: str = "check"
    #: a model object to run instead of the registered one (a mutant: zabmc.mutate)
    model_override: Any = field(default=None, compare=False, repr=False)

    # --- building ----------------------------------------------------------------------------------
    @classmethod
    def from_args(cls, args, **overrides) -> "CheckSpec":
        """The spec of `zabmc check` flags given as one string or a list of words (`--flag value`
        pairs; a flag without a value is a switch): how the gate's runs are written."""
        words = args.split() if isinstance(args, str) else list(args)
        kw: dict = {}
        while words:
            flag = words.pop(0)
            name = _FLAG_FIELDS.get(flag, flag.lstrip("-").replace("-", "_"))
            if name not in _FIELD_TYPES:
                raise UsageError(f"no such option: {flag}")
            kind = _FIELD_TYPES[name]
            if kind is bool:
                kw[name] = True
            elif kind is tuple:
                kw[name] = kw.get(name, ()) + (words.pop(0),)
            else:
                kw[name] = kind(words.pop(0))
        kw.update(overrides)
        return cls(**kw)

    @classmethod
    def from_config(cls, model, config, invariants=None, **fields) -> "CheckSpec":
        """The spec of a model (a registered name, or a model object) explored within the bounds
        of an `ExploreConfig`, checking `invariants` (None: the default properties; (): none)."""
        if not isinstance(model, str):
            fields["model_override"] = model
            model = model.name
        if invariants is not None:
            fields["invariants"] = tuple(invariants)
            fields["no_invariants"] = not invariants
        return cls(model=model, **config._asdict(), **fields)

    def replace(self, **changes) -> "CheckSpec":
        return dataclasses.replace(self, **changes)

    @property
    def stop_at_first(self) -> bool:
        return not self.find_all

    @property
    def quiet_console(self) -> bool:
        """No progress and no start lines: `-q`, or `--json` (stdout is one JSON document)."""
        return self.quiet or self.as_json

    @cached_property
    def model_obj(self):
        """The model to run: `model_override`, or the one registered under `model`."""
        if self.model_override is not None:
            return self.model_override
        from zabmc.core.model import get_model

        return get_model(self.model)

    def config(self):
        """The bounds as an `ExploreConfig`, validated."""
        from zabmc.explore.env import ExploreConfig

        return ExploreConfig(*(getattr(self, k) for k in BOUNDS)).validate()

    @cached_property
    def properties(self) -> tuple:
        """The names of the properties checked (liveness ones with `liveness`)."""
        if self.liveness:
            from zabmc.explore.liveness import resolve

            return resolve(self.invariants)
        from zabmc.invariants import resolve

        names = resolve(self.invariants, self.no_invariants)
        if self.invariants:  # named by the user: each must be one this model can break
            _refuse_unbreakable(self.model_obj, names)
        return names

    def env(self):
        """The `Env` the search runs in. Liveness keeps no safety ghost state."""
        from zabmc.explore.env import Env
        from zabmc.invariants import Checker

        started = self.started
        if started is not None:  # its start's bounds, and a fresh environment's memos
            return Env(started.model, started.config, started.checker, started.start,
                       symmetry=self.symmetry)
        return Env(self.model_obj, self.config(), Checker(() if self.liveness else self.properties),
                   symmetry=self.symmetry)

    @cached_property
    def started(self):
        """The `Env` of a search from `--from` or `--scenario` (the trace read and replayed once,
        a one-line `UsageError` for one that cannot be a start), or None."""
        if self.start_from is None and self.scenario is None:
            return None
        from zabmc.explore.start import parse_from, start_env
        from zabmc.invariants import Checker

        if self.scenario is not None:
            from zabmc.core.model import scenario

            sc = scenario(self.model_obj, self.scenario)
            label, where = f"scenario {self.scenario}", f"--scenario {self.scenario}:"
            if sc.goal is not None:  # reached by this model's own breadth-first search
                from zabmc.explore.start import reach_env

                return reach_env(self.model_obj, self.config(), Checker(self.properties), sc,
                                 label, where)
            path, k = sc.path, None
        else:
            (path, k), label, where = parse_from(self.start_from), self.start_from, "--from"
        return start_env(self.model_obj, self.config(), Checker(self.properties), path, k, label,
                         where)

    # --- the rules ---------------------------------------------------------------------------------
    def validate(self) -> "CheckSpec":
        """Every rule that ties options together, in the order the command line applied them: the
        first broken one raises a one-line `UsageError`. Returns the spec."""
        if self.purpose == "graph":
            return self._validate_graph()
        if self.require_complete and self.strategy == "random":
            raise UsageError("--require-complete needs an exhaustive strategy (bfs or dfs): random "
                             "walks never exhaust a space")
        if self.liveness:
            return self._validate_liveness()
        self._validate_search()
        self._validate_model()
        self._validate_start()
        from zabmc.explore.por import refuse

        self.config()
        refuse(self.reduction, network=self.network, model=self.model_obj,
               strategy=self.strategy, engine=self.engine,
               properties=self.properties)  # (unknown names are refused here)
        from zabmc.explore.symmetry import refuse as refuse_symmetry

        refuse_symmetry(self.symmetry, model=self.model_obj, strategy=self.strategy,
                        engine=self.engine, reduction=self.reduction,
                        checkpoint=bool(self.checkpoint_dir or self.resume_dir),
                        properties=self.properties)
        self._validate_spill()
        self._validate_outputs()
        return self

    def _validate_start(self) -> None:
        """--from and --scenario: one of them, and a start the trace can give (read and replayed
        here, before the search)."""
        if self.start_from is not None and self.scenario is not None:
            raise UsageError("--from and --scenario exclude each other (a scenario is a named "
                             "start: --from TRACE[:K] names one of your own)")
        self.config()
        self.started  # noqa: B018

    def _validate_outputs(self) -> None:
        """--trace-out and --html can be written, and are not the same file: checked before the
        search, so that no finished search loses its result to a path."""
        from zabmc.core.files import check_outputs

        check_outputs({"--trace-out": self.trace_out, "--html": self.html_out},
                      kinds={"--trace-out": "trace", "--html": "picture"}, force=self.force)

    def _validate_search(self) -> None:
        if self.max_states is not None and self.strategy != "dfs":
            raise UsageError("--max-states works with --liveness or --strategy dfs (breadth-first "
                             "safety checks bound memory with --memory-limit)")
        if self.max_states is not None and self.max_states < 1:
            raise UsageError(f"--max-states must be at least 1, got {self.max_states}")
        if self.invariants and self.no_invariants:
            raise UsageError("--invariant and --no-invariants exclude each other")
        if self.walks < 1:
            raise UsageError(f"--walks must be at least 1, got {self.walks}")
        if not 0 <= self.seed < 1 << 64:  # as zabmc simulate's
            raise UsageError(f"--seed must be an unsigned 64-bit integer, got {self.seed}")
        self._validate_time_limit()
        if self.engine == "spark" and self.strategy != "bfs":
            raise UsageError("--engine spark runs breadth-first search only (--strategy bfs)")
        if self.resume_dir and self.strategy != "bfs":
            raise UsageError("--resume works with --strategy bfs")
        if self.checkpoint_dir and self.strategy != "bfs":
            raise UsageError("--checkpoint works with --strategy bfs")
        self._validate_workers()
        if not (math.isfinite(self.checkpoint_every) and self.checkpoint_every >= 0):
            raise UsageError(f"--checkpoint-every must be a finite number of seconds, not "
                             f"negative, got {self.checkpoint_every}")

    def _validate_workers(self) -> None:
        """--workers N: breadth-first, in process, every level in memory, no sleep sets."""
        if not 1 <= self.workers <= MAX_WORKERS:
            raise UsageError(f"--workers must be from 1 to {MAX_WORKERS} (processes, one per core), "
                             f"got {self.workers}")
        if self.workers == 1:
            return
        if not (self.strategy == "bfs" and self.engine == "in-process"):
            raise UsageError("--workers works with --strategy bfs --engine in-process (Spark "
                             "spreads its search over --master's cores)")
        if self.reduction == "por+sleep":
            raise UsageError("--workers does not work with --reduction por+sleep: the sleep sets "
                             "follow the order one process expands a level in (--reduction por "
                             "works)")
        if self.memory_limit is not None or self.spill_dir is not None:
            raise UsageError("--workers keeps every level in memory: not with --memory-limit or "
                             "--spill-dir")

    def _validate_time_limit(self) -> None:
        if self.time_limit is not None and not (math.isfinite(self.time_limit)
                                                and self.time_limit > 0):
            raise UsageError(f"--time-limit must be a positive finite number of seconds, got "
                             f"{self.time_limit}")

    def _validate_model(self) -> None:
        """The model exists and gets the links it assumes."""
        model = self.model_obj
        if model.network_assumption == "fifo" and self.network != "fifo":
            raise UsageError(f"model {model.name} assumes FIFO links (the paper's TCP); under "
                             f"--network {self.network} its violations would not be bugs: use "
                             "--network fifo")

    def _validate_spill(self) -> None:
        """--memory-limit and --spill-dir: breadth-first and in process only."""
        if not (self.strategy == "bfs" and self.engine == "in-process"):
            if self.memory_limit is not None or self.spill_dir is not None:
                raise UsageError("--memory-limit and --spill-dir work with --strategy bfs "
                                 "--engine in-process")
            return
        if self.memory_limit is not None and self.memory_limit.strip().lower() == "none":
            if self.spill_dir is not None:
                raise UsageError("--spill-dir needs levels that may spill: not with "
                                 "--memory-limit none")
            return
        if self.spill_dir is not None and not os.path.isdir(self.spill_dir):
            raise UsageError(f"--spill-dir {self.spill_dir}: not a directory")
        if self.spill_dir is not None and not os.access(self.spill_dir, os.W_OK | os.X_OK):
            raise UsageError(f"--spill-dir {self.spill_dir}: not writable")
        if self.memory_limit is not None:
            from zabmc.explore.memory import parse_size

            parse_size(self.memory_limit)

    def _validate_liveness(self) -> "CheckSpec":
        unsupported = dict(checkpoint=self.checkpoint_dir, resume=self.resume_dir,
                           force=self.force or None,
                           spill_dir=self.spill_dir, memory_limit=self.memory_limit,
                           all=self.find_all or None, no_invariants=self.no_invariants or None,
                           workers=(self.workers != 1) or None,
                           reduction=(self.reduction != "none") or None,
                           symmetry=self.symmetry or None,
                           **{"from": self.start_from, "scenario": self.scenario})
        for flag, value in unsupported.items():
            if value:
                raise UsageError(f"--{flag.replace('_', '-')} does not work with --liveness")
        if self.strategy != "bfs" or self.engine != "in-process":
            raise UsageError("--liveness runs breadth-first in-process (--strategy bfs --engine "
                             "in-process)")
        if self.live_max_states < 1:
            raise UsageError(f"--max-states must be at least 1, got {self.live_max_states}")
        self._validate_time_limit()
        self.properties  # noqa: B018
        from zabmc.explore.liveness import supports

        if not supports(self.model_obj):
            raise UsageError(f"model {self.model_obj.name} does not say who leads whom "
                             "(leader_of, established), which --liveness needs")
        self._validate_model()
        self.config()
        self._validate_outputs()
        return self

    def _validate_graph(self) -> "CheckSpec":
        if self.max_states is None or self.max_states < 1:
            raise UsageError(f"--max-states must be at least 1, got {self.max_states}")
        if self.invariants and self.no_invariants:
            raise UsageError("--invariant and --no-invariants exclude each other")
        model = self.model_obj
        if model.network_assumption == "fifo" and self.network != "fifo":
            raise UsageError(f"model {model.name} assumes FIFO links: use --network fifo")
        self.config()
        self.properties  # noqa: B018
        return self

    @property
    def live_max_states(self) -> int:
        """--liveness's state cap: `max_states`, or the default cap of the liveness search."""
        if self.max_states is not None:
            return self.max_states
        from zabmc.explore.liveness import DEFAULT_MAX_STATES

        return DEFAULT_MAX_STATES

    # --- running -----------------------------------------------------------------------------------
    def prepare(self, log=None):
        """The environment and the engine's options (checkpoints read, spill set up): a bad
        checkpoint is refused here, before anything is printed. `log` takes the checkpointer's
        lines."""
        from zabmc.engines import prepare

        return prepare(self, log)

    def run(self, observer=None, log=None):
        """Validate, prepare and run the search: its `Outcome` (with `liveness`, a
        `zabmc.explore.liveness.LivenessOutcome`, whose findings are lassos)."""
        return self.validate().prepare(log).run(observer)

    def state_graph(self):
        """`zabmc graph`: the state graph the search explores (networkx), refused above
        `max_states`."""
        from zabmc.explore.graph import state_graph

        return state_graph(self.env(), self.max_states)


def _field_types() -> dict:
    kinds = {}
    for f in dataclasses.fields(CheckSpec):
        t = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        kinds[f.name] = (bool if t == "bool" else tuple if t == "tuple" else
                         float if t.startswith("float") else int if t.startswith("int") else str)
    kinds.pop("model_override")
    kinds.pop("purpose")
    return kinds


#: the most processes `--workers` forks
MAX_WORKERS = 256

_FIELD_TYPES = _field_types()
#: flags whose field is not the flag's own name (tests/test_spec.py checks that `from_args` reads
#: every flag of `zabmc check` as click does)
_FLAG_FIELDS = {"--all": "find_all", "--from": "start_from", "--invariant": "invariants", "--json": "as_json",
                "--html": "html_out", "--checkpoint": "checkpoint_dir", "--resume": "resume_dir",
                "-q": "quiet"}


def _refuse_unbreakable(model, names) -> None:
    """A property no run of `model` can break would make a check that cannot fail: refuse it,
    naming the models where it can (`zabmc.core.properties.can_break`)."""
    from zabmc.core.model import get_model, model_names
    from zabmc.core.properties import can_break

    ok = can_break(model)
    for name in names:
        if name not in ok:
            where = [m for m in model_names() if name in can_break(get_model(m))]
            raise UsageError(f"property {name!r} cannot break on model {model.name}: no run of it "
                             "reports that failure or reaches that state; it can on "
                             f"{', '.join(where)}")
