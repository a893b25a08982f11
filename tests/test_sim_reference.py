"""The simulator's golden digests against a second implementation in this repository.

tests/reference/sim_db19.py implements the db-19 seeded tick simulator and its canonical dump
again, from the protocol's description (docs/semantics.md, "The db-19 protocol" and the choices
C1-C27), importing nothing of zabmc or models/. On every configuration that tests/test_sim.py
pins, its SHA-256 must be the pinned digest and zabmc's; on random configurations (a fixed
seed, so every run checks the same ones), the two must agree with each other.
"""

from __future__ import annotations

import ast
import random
import subprocess
import sys
from pathlib import Path

import pytest

from models.db19 import MODEL
from test_sim import BENCH_GOLDEN, GOLDEN, _cfg
from zabmc.sim import simulate

REFERENCE = Path(__file__).resolve().parent / "reference" / "sim_db19.py"
sys.path.insert(0, str(REFERENCE.parent))
import sim_db19  # noqa: E402


def _pairs(part: str):
    ids = [int(x) for x in part.split(",")] if part else []
    return list(zip(ids[0::2], ids[1::2]))


def test_the_reference_shares_no_code_with_zabmc():
    tree = ast.parse(REFERENCE.read_text())
    imported = {a.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for a in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported == {"__future__", "argparse", "hashlib", "heapq", "struct", "sys"}


@pytest.mark.parametrize("seed, nodes, rounds, proposals, part, digest", GOLDEN)
def test_the_reference_gives_every_pinned_digest(seed, nodes, rounds, proposals, part, digest):
    assert sim_db19.digest(seed, nodes, rounds, proposals, _pairs(part)) == digest
    assert simulate(MODEL, _cfg(seed, nodes, rounds, proposals, part)).digest == digest


@pytest.mark.slow
def test_the_reference_gives_the_benchmark_digest():
    seed, nodes, rounds, proposals, part, digest = BENCH_GOLDEN
    assert sim_db19.digest(seed, nodes, rounds, proposals, _pairs(part)) == digest


def _random_configs(count: int):
    rng = random.Random(19)
    out = []
    for _ in range(count):
        n = rng.randint(1, 7)
        links = [(a, b) for a in range(n) for b in range(n) if a != b]
        cut = rng.sample(links, rng.randint(0, min(4, len(links)))) if rng.random() < 0.5 else []
        part = ",".join(f"{a},{b}" for a, b in sorted(cut))
        out.append((rng.getrandbits(64), n, rng.randint(0, 1500), rng.randint(0, 15), part))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("seed, nodes, rounds, proposals, part", _random_configs(40))
def test_the_reference_and_zabmc_agree_on_random_configurations(seed, nodes, rounds, proposals,
                                                                 part):
    assert sim_db19.digest(seed, nodes, rounds, proposals, _pairs(part)) == \
        simulate(MODEL, _cfg(seed, nodes, rounds, proposals, part)).digest


def test_the_reference_command_prints_the_digest_alone():
    seed, nodes, rounds, proposals, part, digest = GOLDEN[13]
    r = subprocess.run([sys.executable, str(REFERENCE), "--seed", str(seed), "--nodes", str(nodes),
                        "--rounds", str(rounds), "--proposals", str(proposals), "--partition",
                        part], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (0, digest, "")
