"""The executor-side environment: executors never receive an `Env`, they receive an `EnvSpec`
(model name, `ExploreConfig`, property names, state codec) taken from the driver's `Env` (which
the check's `CheckSpec.env()` built) and rebuild the very same `Env` with `zabmc.core.model.get_model`,
`Env` and `zabmc.invariants.Checker`, once per Python worker process.

Deliberately not through `CheckSpec`: the worker sits below the engines a `CheckSpec` runs
(spec -> engines -> spark -> worker), so building one here would be an import circle;
tests/test_spark_worker.py checks that the rebuilt `Env` is the driver's (same initial
fingerprint, same successors)."""

from __future__ import annotations

from typing import NamedTuple

from zabmc.explore.codec import Codec, make_codec


class EnvSpec(NamedTuple):
    """A picklable description from which an executor rebuilds the driver's `Env`."""

    model: str
    config: tuple  # ExploreConfig fields
    invariants: tuple
    codec: str  # "marshal" or "pickle"
    #: where an executor without zabmc's entry points finds the model (zabmc.core.model.where)
    where: tuple = ()


class Context(NamedTuple):
    env: object
    codec: Codec


_CONTEXTS: dict = {}


def context(spec: EnvSpec) -> Context:
    """The Env of `spec`, built once per worker process (Spark reuses Python workers)."""
    ctx = _CONTEXTS.get(spec)
    if ctx is None:
        from zabmc.explore.env import Env, ExploreConfig
        from zabmc.invariants import Checker
        from zabmc.core.model import get_model
        from zabmc.core.model import ensure

        if spec.where:
            ensure(spec.model, spec.where)
        env = Env(get_model(spec.model), ExploreConfig(*spec.config), Checker(spec.invariants))
        ctx = _CONTEXTS[spec] = Context(env, make_codec(spec.codec, env))
    return ctx
