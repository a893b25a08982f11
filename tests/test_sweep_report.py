"""`zabmc sweep --report`: the summary of a sweep's Parquet table, read with pyarrow (no JVM) or
Spark SQL, against the same aggregates computed row by row in plain Python.

The tables here are written with pyarrow in the sweep's schema; the Spark-marked tests compare
the two readers on a table and check that `zabmc sweep` summarises what it wrote the same way.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import need_module
from zabmc.cli import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, main


def _arrow():
    """pyarrow and pyarrow.parquet, which write the tables here (and are the arrow reader)."""
    install = "pip install -e '.[spark]' (make install-test)"
    return need_module("pyarrow", install), need_module("pyarrow.parquet", install)


@pytest.fixture
def arrow():
    return _arrow()


def schema():
    pa, _ = _arrow()
    return pa.schema([("config", pa.string()), ("nodes", pa.int32()), ("rounds", pa.int32()),
                      ("proposals", pa.int32()), ("partition", pa.string()),
                      ("seed", pa.int64()), ("digest", pa.string()),
                      ("violation", pa.string()), ("tick", pa.int32()), ("message", pa.string())])


CONFIGS = {"n3-r100-p5": (3, 100, 5, ""), "n3-r100-p5-cut01": (3, 100, 5, "0,1"),
           "n5-r50-p0": (5, 50, 0, "")}
PROPS = ("agreement", "local-primary-order", "sane-history")


def row(config, seed, prop=None, tick=None):
    n, r, p, cut = CONFIGS[config]
    return dict(config=config, nodes=n, rounds=r, proposals=p, partition=cut, seed=seed,
                digest=f"{seed:064x}", violation=prop, tick=tick,
                message=f"{prop} at {tick} (seed {seed})" if prop else None)


def write(path, rows, files=1):
    pa, pq = _arrow()
    path.mkdir()
    for k in range(files):
        part = rows[k::files]
        pq.write_table(pa.Table.from_pylist(part, schema=schema()), path / f"part-{k:05d}.parquet",
                       row_group_size=7)
    return str(path)


def expected(rows):
    """What the report must say, computed row by row."""
    configs, viol = {}, {}
    for r in rows:
        configs[r["config"]] = configs.get(r["config"], 0) + 1
        if r["violation"] is None:
            continue
        k = (r["config"], r["violation"])
        runs, first, earliest, latest = viol.get(k, (0, None, None, None))
        viol[k] = (runs + 1,
                   min(first, (r["seed"], r["tick"], r["message"])) if first else
                   (r["seed"], r["tick"], r["message"]),
                   min(earliest, (r["tick"], r["seed"])) if earliest else (r["tick"], r["seed"]),
                   max(latest, r["tick"]) if latest is not None else r["tick"])
    return configs, {k: dict(runs=v[0], first_seed=v[1][0], first_tick=v[1][1],
                             first_message=v[1][2], earliest_tick=v[2][0],
                             earliest_seed=v[2][1], latest_tick=v[3]) for k, v in viol.items()}


def as_expected(rep):
    configs = {c["config"]: c["runs"] for c in rep.configs}
    viol = {(d["config"], d["property"]): {k: d[k] for k in ("runs", "first_seed", "first_tick",
                                                             "first_message", "earliest_tick",
                                                             "earliest_seed", "latest_tick")}
            for d in rep.violations}
    return configs, viol


rows_strategy = st.lists(
    st.tuples(st.sampled_from(sorted(CONFIGS)), st.integers(0, 10**12),
              st.one_of(st.none(), st.tuples(st.sampled_from(PROPS), st.integers(0, 500)))),
    min_size=1, max_size=60, unique_by=lambda t: (t[0], t[1]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows_strategy, st.integers(1, 3), st.sampled_from([1, 2, 5, 1 << 20]))
def test_arrow_report_is_the_row_by_row_summary(arrow, tmp_path_factory, spec, files, batch):
    from zabmc.spark.sweep_report import report_arrow

    rows = [row(c, s, *(v or (None, None))) for c, s, v in spec]
    path = write(tmp_path_factory.mktemp("t") / "sweep.parquet", rows, files)
    rep = report_arrow(path, batch_rows=batch)
    assert as_expected(rep) == expected(rows)
    assert rep.runs == len(rows)
    assert rep.violating == sum(1 for r in rows if r["violation"])
    # ordered by configuration (nodes, rounds, proposals, partition), then most runs first
    order = [c["config"] for c in rep.configs]
    assert order == sorted(order, key=lambda c: CONFIGS[c])


FIXED = [row("n3-r100-p5", 7, "agreement", 40), row("n3-r100-p5", 3, "agreement", 90),
         row("n3-r100-p5", 4), row("n3-r100-p5", 12, "sane-history", 5),
         row("n3-r100-p5-cut01", 9, "agreement", 12), row("n5-r50-p0", 1), row("n5-r50-p0", 2)]


def run(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_cli_report_json_text_and_exit_codes(arrow, capsys, tmp_path):
    path = write(tmp_path / "s.parquet", FIXED, files=2)
    code, out, _ = run(capsys, "sweep", "--report", path, "--json")
    assert code == EXIT_VIOLATION
    got = json.loads(out)
    assert (got["reader"], got["runs"], got["violating_runs"]) == ("arrow", 7, 4)
    assert [(c["config"], c["runs"], c["violating"]) for c in got["configurations"]] == [
        ("n3-r100-p5", 4, 3), ("n3-r100-p5-cut01", 1, 1), ("n5-r50-p0", 2, 0)]
    assert got["violations"][0] == dict(
        config="n3-r100-p5", property="agreement", runs=2, first_seed=3, first_tick=90,
        first_message="agreement at 90 (seed 3)", earliest_tick=40, earliest_seed=7,
        latest_tick=90)
    code, out, _ = run(capsys, "sweep", "--report", path)
    assert code == EXIT_VIOLATION
    assert "3 (90)" in out and "40 (7)" in out and "(none)" in out
    assert "replay one: zabmc simulate --seed 3 --nodes 3 --rounds 100 --proposals 5 --check" \
        in out
    clean = write(tmp_path / "clean.parquet", [row("n5-r50-p0", 1), row("n5-r50-p0", 2)])
    code, out, _ = run(capsys, "sweep", "--report", clean, "--json")
    assert code == EXIT_OK and json.loads(out)["violations"] == []


def assert_one_line_usage_errors(capsys, cases):
    for args, message in cases:
        code, out, err = run(capsys, "sweep", *args)
        assert code == EXIT_USAGE, (args, err)
        assert message in err and err.count("\n") == 1 and err.startswith("zabmc: error: "), err


def test_report_without_a_table_is_one_line_and_exit_2(capsys, tmp_path):
    """Refused before any table is read: these need no pyarrow."""
    assert_one_line_usage_errors(capsys, [
        (("--report", str(tmp_path / "nowhere")), "no sweep table at"),
        (("--report-engine", "arrow",), "--report-engine goes with --report"),
        (("--report", str(tmp_path / "nowhere"), "--seeds", "0..5"), "it takes no --seeds"),
    ])


def test_report_bad_input_is_one_line_and_exit_2(arrow, capsys, tmp_path):
    pa, pq = arrow
    good = write(tmp_path / "s.parquet", FIXED)
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "part-0.parquet").write_bytes(b"not parquet at all")
    other = tmp_path / "other.parquet"
    other.mkdir()
    pq.write_table(pa.table({"x": [1, 2]}), other / "p.parquet")
    cases = [
        (("--report", str(junk)), "cannot read"),
        (("--report", str(other)), "not a zabmc sweep table (no column config"),
        (("--report", good, "--seeds", "0..5"), "it takes no --seeds"),
        (("--report", good, "--nodes", "3"), "it takes no --nodes"),
        (("--report", good, "--report-engine", "arrow", "--master", "local[2]"),
         "--master goes with --report-engine spark"),
    ]
    assert_one_line_usage_errors(capsys, cases)


@pytest.mark.spark
def test_spark_reader_gives_the_arrow_report(arrow, spark, tmp_path):
    from zabmc.spark.sweep_report import report, report_arrow, report_spark

    rows = FIXED + [row("n3-r100-p5", s, PROPS[s % 3] if s % 4 else None, (s * 37) % 300)
                    for s in range(100, 400)]
    for r in rows:
        if r["violation"] is None:
            r["tick"] = r["message"] = None
    path = write(tmp_path / "s.parquet", rows, files=3)
    a = report_arrow(path)
    s = report_spark(spark.spark, path)
    assert a._replace(engine="-") == s._replace(engine="-")
    assert as_expected(a) == expected(rows)
    assert report(path, engine="spark", master="local[2]").engine == "spark"
