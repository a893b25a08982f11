"""The Spark engine (`zabmc check --engine spark`) and the seed sweep (`zabmc sweep`).

This package is the only place in zabmc that imports pyspark, and it does so lazily: importing
`zabmc.spark` or any of its modules never starts a JVM. The session is created once, on first use
(`session.get_session`).

- `session`: the SparkSession (quiet start-up, settings that were measured to help, reuse).
- `worker`: what runs on executors: the explorer's own `Env` rebuilt from a small picklable
  description, the state codec, and `step`, one partition's task of a BFS level (merge its
  candidates, then expand the states it kept).
- `engine`: the driver's level-synchronous BFS loop (`spark_bfs`).
- `sweep`: the seeded simulator over seeds x configurations as one Spark job, to Parquet.
"""
