"""How a validated `CheckSpec` runs: its `Env` and the engine's options (checkpoints, levels on
disk, partial-order reduction), then the search on the in-process strategies, on Spark, or the
liveness search. `zabmc.spec` is the API; this module is its machinery."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from zabmc.core.errors import UsageError


@dataclass
class Prepared:
    """A validated spec with its `Env` and engine options, ready to run."""

    spec: Any  # a validated zabmc.spec.CheckSpec
    env: Any
    options: dict

    @property
    def resumed(self):
        """The checkpoint snapshot a --resume starts from, or None."""
        return self.options.get("resume")

    def start_info(self) -> dict:
        """What the observer's `on_start` is told."""
        s, cfg = self.spec, self.env.search_config
        if s.liveness:
            return {"model": self.env.model.name, "strategy": "bfs (liveness)",
                    "engine": "in-process", "config": cfg._asdict(), "invariants": s.properties}
        start = self.env.start
        return {"model": self.env.model.name, "strategy": s.strategy, "engine": s.engine,
                "config": {k: v for k, v in cfg._asdict().items()}, "invariants": s.properties,
                "walks": s.walks if s.strategy == "random" else None,
                "start": None if start is None else start.to_json(self.env)}

    def run(self, observer=None):
        return run(self, observer)


def prepare(spec, log=None):
    """A `Prepared` run of `spec`; `log(line)` takes the checkpointer's lines."""
    env = spec.env()
    options: dict = {}
    if spec.liveness:
        return Prepared(spec, env, options)
    if spec.engine == "spark":
        options = _spark_checkpoint_options(spec, env, log)
    elif spec.checkpoint_dir or spec.resume_dir:
        options = _checkpoint_options(spec, env, log)
    if spec.strategy == "bfs" and spec.engine == "in-process" and spec.workers == 1:
        options.update(_spill_options(spec, env, options))
    if spec.reduction != "none":
        from zabmc.explore.por import Stubborn

        options["reduction"] = Stubborn(env, sleep=spec.reduction == "por+sleep")
    return Prepared(spec, env, options)


def run(prepared, observer=None):
    """The search of a `Prepared` run: its `Outcome` (a `LivenessOutcome`, whose findings are
    lassos, with --liveness)."""
    from zabmc.explore.outcome import NULL_OBSERVER

    spec, env = prepared.spec, prepared.env
    observer = observer or NULL_OBSERVER
    if spec.liveness:
        from zabmc.explore.liveness import Liveness

        return Liveness(env, spec.properties, max_states=spec.live_max_states,
                        observer=observer, time_limit=spec.time_limit).run()
    if spec.engine == "spark":
        from zabmc.spark.engine import spark_bfs

        return spark_bfs(env, stop_at_first=spec.stop_at_first, observer=observer,
                         master=spec.master, partitions=spec.partitions, verbose=spec.verbose,
                         time_limit=spec.time_limit, **prepared.options)
    from zabmc.strategies import get_strategy

    options = {"seed": spec.seed, "walks": spec.walks} if spec.strategy == "random" else {}
    options.update(prepared.options)
    if spec.max_states is not None:
        options["max_states"] = spec.max_states
    strategy = get_strategy(spec.strategy)
    if spec.workers > 1:
        from zabmc.explore.parallel import ParallelBFS

        strategy, options["workers"] = ParallelBFS, spec.workers
    return strategy(env, stop_at_first=spec.stop_at_first, observer=observer,
                    time_limit=spec.time_limit, **options).run()


def _logger(spec, log):
    def line(text: str) -> None:
        if log is not None and not spec.quiet_console:
            log(text)

    return line


def _guard(spec, ck) -> None:
    """--checkpoint DIR never replaces a checkpoint this run does not resume, unless --force."""
    d = spec.checkpoint_dir
    if d is None or spec.force:
        return
    if spec.resume_dir is not None and os.path.realpath(spec.resume_dir) == os.path.realpath(d):
        return
    ck.refuse_overwrite(d)


def _checkpoint_options(spec, env, log) -> dict:
    """The BFS options that write checkpoints into --checkpoint (or the --resume directory) and
    resume from --resume."""
    from zabmc.explore import checkpoint as ck
    from zabmc.explore.codec import choose_codec, make_codec

    directory = spec.checkpoint_dir or spec.resume_dir
    codec_name = choose_codec(env)
    ident = _identity(spec, env, spec.strategy, codec_name, reduction=spec.reduction)
    options = {"codec": make_codec(codec_name, env)}
    if spec.resume_dir:
        options["resume"] = ck.load(spec.resume_dir, ident)
    options["checkpoint"] = _writer(ck.Checkpointer, directory, ident, spec, log)
    return options


def _writer(cls, directory, ident, spec, log):
    """A checkpoint writer of class `cls` into `directory` (never over a checkpoint this run
    does not resume, `_guard`); a one-line error if it cannot be."""
    from zabmc.explore import checkpoint as ck

    _guard(spec, ck)
    try:
        return cls(directory, ident, every=spec.checkpoint_every, log=_logger(spec, log))
    except OSError as e:
        raise UsageError(f"--checkpoint {directory}: {e.strerror or e}") from None


def _identity(spec, env, strategy, codec_name, **more) -> dict:
    """What a checkpoint must match to be resumed by this check (`zabmc.explore.checkpoint`)."""
    from zabmc.explore import checkpoint as ck

    if env.start is not None:  # the start state, whatever names it (--from, --scenario)
        more["start"] = {"fingerprint": env.fingerprint(env.start.state).hex(),
                         "events": env.start.events}
    return ck.identity(model=env.model.name, config=env.config, invariants=env.checker.names,
                       strategy=strategy, stop_at_first=spec.stop_at_first, codec=codec_name,
                       **more)


def _spark_checkpoint_options(spec, env, log) -> dict:
    """The Spark engine's options for --checkpoint and --resume: DIR (--checkpoint, or else the
    --resume directory) is Spark's reliable checkpoint directory for lineage cuts and, unless it is
    a URL, where level snapshots go; --resume reads either checkpoint format."""
    from zabmc.explore import checkpoint as ck
    from zabmc.explore.codec import choose_codec
    from zabmc.spark import checkpoint as sck

    directory = spec.checkpoint_dir or spec.resume_dir
    options: dict = {"checkpoint_dir": directory}
    if directory is None:
        return options
    ident = _identity(spec, env, "bfs", choose_codec(env))
    if spec.resume_dir:
        options["resume"] = sck.load(spec.resume_dir, ident)
    if sck.is_url(directory):
        return options  # lineage cuts only: level snapshots are written with plain file I/O
    options["snapshots"] = _writer(sck.LevelSnapshots, directory, ident, spec, log)
    return options


def _spill_options(spec, env, options) -> dict:
    """The BFS options that let large levels go to disk (`zabmc.explore.spill`); the flags were
    checked by `CheckSpec.validate`."""
    from zabmc.explore.codec import choose_codec, make_codec
    from zabmc.explore.memory import mem_available, parse_size
    from zabmc.explore.spill import DEFAULT_LEVEL_BUDGET, Spill

    if spec.memory_limit is not None and spec.memory_limit.strip().lower() == "none":
        return {}
    if spec.memory_limit is None:
        limit = mem_available() // 2 or 4 << 30
    else:
        limit = parse_size(spec.memory_limit)
    codec = options.get("codec") or make_codec(choose_codec(env), env)
    return {"codec": codec, "spill": Spill(codec, min(limit // 4, DEFAULT_LEVEL_BUDGET),
                                           parent=spec.spill_dir),
            "memory_limit": limit}
