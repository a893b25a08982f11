"""The core layer: what every other part of zabmc stands on, and which stands on none of them.

- `zabmc.core.errors`: the one root of the errors a user sees (bad input, exit 2) and their texts;
- `zabmc.core.files`: the one writer and the one reader of every file zabmc writes or reads;
- `zabmc.core.signals`: SIGINT and SIGTERM from a command's first instruction to its last;
- `zabmc.core.model`: the contract a protocol model implements, and the registry models add
  themselves to;
- `zabmc.core.events`: the events of a run (deliveries, drops, timers, crashes, a model's own
  actions): their behaviour, their JSON and their names for people;
- `zabmc.core.properties`: the registry of properties, the papers' own and those models add;
- `zabmc.core.trace`: the counterexample trace file (`zabmc-trace`, docs/traces.md), read and
  checked once into a frozen `TraceFile`, and the replayed run (`Replayed`) as JSON.

The simulator, the explorer, Spark, export, real servers, reports and the command line import it;
it imports none of them (tests/test_imports.py checks, from docs/architecture.md).
"""
