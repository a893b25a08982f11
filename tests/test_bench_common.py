"""benchmarks/common.py's `check_json`: the CPU seconds a report cell shows are its own child's,
even when other cells run at once (release_matrix.py --jobs 2)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import check_json  # noqa: E402

# burns about one CPU second, then prints an empty JSON document
BUSY = "import time\nt=time.process_time()\nwhile time.process_time()-t<1.0: pass\nprint('{}')"
# waits (asleep, no CPU to speak of) until the busy child has exited, then prints the same
IDLE = ("import os,sys,time\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.02)\n"
        "print('{}')")


def test_a_childs_cpu_seconds_leave_out_a_sibling_that_ran_at_the_same_time(tmp_path):
    done = tmp_path / "busy-exited"
    got = {}

    def busy():
        got["busy"] = check_json([sys.executable, "-c", BUSY])
        done.touch()  # after the busy child was reaped: it ended inside the idle child's run

    def idle():
        got["idle"] = check_json([sys.executable, "-c", IDLE, str(done)])

    threads = [threading.Thread(target=idle), threading.Thread(target=busy)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got["busy"]["cpu_seconds"] >= 1.0
    # a difference of RUSAGE_CHILDREN around the idle child would include the busy second
    assert got["idle"]["cpu_seconds"] < 0.5
    assert got["idle"]["exit"] == got["busy"]["exit"] == 0


def test_a_report_cell_names_the_first_violation_or_how_far_the_search_went():
    from benchmarks.common import result_cell

    d = {"distinct_states": 22_681, "cpu_seconds": 1.46, "stop_reason": "violation",
         "violations": [{"property": "leader-unexpected-ack", "depth": 18}],
         "config": {"depth": 30}}
    assert result_cell(d, "`{property}` at {depth} events") == \
        "`leader-unexpected-ack` at 18 events (22,681 states, 1.5 CPU s)"
    d.update(violations=[], stop_reason="depth")
    assert result_cell(d, "unused", 0) == "none: clean to depth 30 (22,681 states, 1 CPU s)"
    d.update(stop_reason="exhausted")
    assert result_cell(d, "unused") == "none: exhausted (22,681 states, 1.5 CPU s)"
