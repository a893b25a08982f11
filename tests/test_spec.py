"""`zabmc.spec.CheckSpec` (issue #35 point 1): one value for a check, built from flags by click or
from a gate run's words, validated once, run to an `Outcome`."""

from __future__ import annotations

import dataclasses

import pytest

from zabmc.core.errors import UsageError
from zabmc.spec import CheckSpec


def test_the_flags_defaults_are_the_specs(cli):
    """click declares each flag once with CheckSpec's default: a spec of no flags is CheckSpec()."""
    from zabmc.cli.check import check

    ctx = check.make_context("check", [])
    from zabmc.cli.options import spec_of

    assert spec_of(ctx.params) == CheckSpec()


def test_from_args_reads_every_gate_run():
    from zabmc.gate import RUNS

    for run in RUNS:
        spec = CheckSpec.from_args(run)
        assert spec.validate() is spec
        assert f"--model {spec.model} " in run and f"--depth {spec.depth}" in run
    s = CheckSpec.from_args("--model zk-fixed --nodes 3 --max-timeouts 1 --depth 30 "
                            "--strategy dfs --max-states 800000 --invariant prefix -q")
    assert (s.model, s.nodes, s.max_timeouts, s.depth, s.strategy, s.max_states, s.invariants,
            s.quiet) == ("zk-fixed", 3, 1, 30, "dfs", 800_000, ("prefix",), True)
    with pytest.raises(UsageError, match="no such option: --bogus"):
        CheckSpec.from_args("--bogus 1")


def test_from_args_reads_every_flag_of_check_as_click_does(cli):
    """`from_args` (for the gate's runs and `zabmc mutate`, below the command line) has its own
    small flag reader; it must read every flag of `zabmc check` as click does, so the two cannot
    drift: each option, with a value of its type, gives the same spec both ways."""
    import click

    from zabmc.cli.check import check
    from zabmc.cli.options import spec_of
    from zabmc.gate import RUNS

    flags = 0
    for p in check.params:
        if not isinstance(p, click.Option):
            continue
        flag = max(p.opts, key=len)
        if p.is_flag:
            words = [flag]
        elif isinstance(p.type, click.Choice):
            words = [flag, p.type.choices[-1]]
        else:  # the first sample value the option's type takes
            for sample in ("7", "2.5", "x"):
                try:
                    p.type.convert(sample, p, None)
                    break
                except (click.BadParameter, ValueError):
                    continue
            words = [flag, sample]
        by_click = spec_of(check.make_context("check", list(words)).params)
        assert CheckSpec.from_args(words) == by_click, words
        flags += 1
    assert flags >= 30  # every option of `zabmc check` was tried
    for run in RUNS:
        assert CheckSpec.from_args(run) == spec_of(check.make_context("check", run.split()).params)


def test_validate_gives_the_command_lines_errors():
    cases = [
        (dict(require_complete=True, strategy="random"), "--require-complete needs an exhaustive"),
        (dict(liveness=True, find_all=True), "--all does not work with --liveness"),
        (dict(max_states=5), "--max-states works with --liveness or --strategy dfs"),
        (dict(walks=0), "--walks must be at least 1, got 0"),
        (dict(model="zab", network="bag"), "model zab assumes FIFO links (the paper's TCP)"),
        (dict(model="zab", network="bag", purpose="graph", max_states=10),
         "model zab assumes FIFO links: use --network fifo"),
        (dict(strategy="dfs", memory_limit="1G"), "--memory-limit and --spill-dir work with"),
    ]
    for fields, message in cases:
        with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
            CheckSpec(**fields).validate()


def test_a_spec_runs_to_an_outcome_and_is_a_value():
    spec = CheckSpec(model="zab", nodes=2, proposals=1, depth=100)
    out = spec.run()
    assert (out.distinct, out.stop_reason, out.violations) == (19, "exhausted", [])
    assert spec == dataclasses.replace(spec) and hash(spec) == hash(CheckSpec.from_args(
        "--model zab --nodes 2 --proposals 1 --depth 100"))
    live = spec.replace(liveness=True, depth=60).run()
    assert live.complete and live.lassos == [] and live.properties == (
        "eventually-leader", "eventually-commit")


def test_the_specs_choices_are_the_registries():
    from zabmc.explore.por import REDUCTIONS
    from zabmc.spec import REDUCTIONS as SPEC_REDUCTIONS, STRATEGY_NAMES
    from zabmc.strategies import STRATEGIES

    assert SPEC_REDUCTIONS == REDUCTIONS and STRATEGY_NAMES == tuple(STRATEGIES)


def test_the_specs_bounds_are_explore_configs_fields_with_its_defaults():
    # CheckSpec spells ExploreConfig's fields out flat (one field a flag): the two must not drift
    from zabmc.explore.env import ExploreConfig
    from zabmc.spec import BOUNDS

    assert BOUNDS == ExploreConfig._fields
    spec = CheckSpec()
    assert {k: getattr(spec, k) for k in BOUNDS} == ExploreConfig()._asdict()
