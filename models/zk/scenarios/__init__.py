"""The zk models' scenarios: named states to search from (`zabmc check --model zk --scenario
NAME`, `zabmc models --scenarios`), each a trace file in this directory, one per model (a trace
is a run of one model), made by the command its `origin` names.

- `remix-epoch1`: the state from which Remix (Ouyang et al., EuroSys 2025) starts its TLC search
  of ZooKeeper's ZAB: epoch 1 established, 1.1 committed, 1.2 in flight
  (tests/corpus/zk/build_remix_epoch1.py). `zk-3.8.0-mspec2` (models/zk/mspec2.py, Remix's MSPEC_2
  grain, registered by benchmarks/remix_grain.py only) has it too, with its followers' second
  NEWLEADER steps among the events, for the search of ZOOKEEPER-4643 from Remix's start
  (benchmarks/remix_targets.py).
"""

from __future__ import annotations

import os

from zabmc.core.model import Scenario

HERE = os.path.dirname(os.path.abspath(__file__))

REMIX_EPOCH1 = ("epoch 1 established (node 2 leads 0 and 1), 1.1 committed by all three, 1.2 "
                "proposed and in flight to both followers: where Remix (EuroSys 2025) starts its "
                "TLC search")
#: model name -> its scenarios
SCENARIOS = {
    model: (Scenario("remix-epoch1", REMIX_EPOCH1,
                     os.path.join(HERE, f"{model}.remix-epoch1.trace.json")),)
    for model in ("zk", "zk-fixed", "zk-3.8.0-mspec2")
}


def attach(module) -> None:
    """Give each model of the adapter `module` that has scenarios its `scenarios` attribute."""
    for value in vars(module).values():
        name = getattr(value, "name", None)
        if isinstance(name, str) and name in SCENARIOS and hasattr(value, "deliver"):
            value.scenarios = SCENARIOS[name]
