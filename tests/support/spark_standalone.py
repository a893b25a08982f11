"""A Spark standalone cluster on this machine: a master and N workers from pyspark's own
distribution, bound to 127.0.0.1, with their logs and work directories in a temporary directory,
stopped (and the directory removed) at the end whatever happens.

    python tests/support/spark_standalone.py [--workers 2] [--cores 1] [--memory 1g]
        # prints the master URL, runs until Ctrl-C or SIGTERM, then stops the cluster

    with standalone_cluster(workers=2) as url:      # in Python (the tests' fixture)
        ...  zabmc check --engine spark --master URL ...

No pyspark import happens here: the cluster is separate JVM processes started with `spark-class`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from zabmc.core.errors import UsageError


def spark_home() -> str:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise UsageError("the standalone cluster needs pyspark: pip install 'zabmc[spark]'")
    return os.path.dirname(spec.origin)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as r:
            data = json.load(r)
    except (OSError, ValueError):
        return -1
    return sum(1 for w in data.get("workers", []) if w.get("state") == "ALIVE")


def _stop(procs) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + 15
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@contextlib.contextmanager
def standalone_cluster(workers: int = 2, cores: int = 1, memory: str = "1g",
                       timeout: float = 120.0):
    """Start the cluster; yield its master URL (`spark://127.0.0.1:PORT`); stop it."""
    home = spark_home()
    spark_class = os.path.join(home, "bin", "spark-class")
    root = tempfile.mkdtemp(prefix="zabmc-spark-cluster-")
    env = dict(os.environ, SPARK_HOME=home, SPARK_LOG_DIR=os.path.join(root, "logs"),
               SPARK_LOCAL_IP="127.0.0.1", SPARK_LOCAL_DIRS=os.path.join(root, "local"),
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    os.makedirs(env["SPARK_LOG_DIR"])
    port, ui = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs = []

    def launch(name, args):
        log = open(os.path.join(root, "logs", f"{name}.log"), "wb")
        procs.append(subprocess.Popen([spark_class, *args], env=env, stdout=log,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      start_new_session=True))

    try:
        launch("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                          "--port", str(port), "--webui-port", str(ui)])
        for k in range(workers):
            work = os.path.join(root, f"worker-{k}")
            os.makedirs(work)
            launch(f"worker-{k}", ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                   "--cores", str(cores), "--memory", memory, "--work-dir", work,
                                   "--webui-port", str(_free_port()), url])
        deadline = time.monotonic() + timeout
        while _alive_workers(ui) < workers:
            dead = [p for p in procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                logs = os.path.join(root, "logs")
                raise RuntimeError(f"the standalone cluster did not come up ({len(dead)} "
                                   f"process(es) exited; logs in {logs})")
            time.sleep(0.3)
        yield url
    finally:
        _stop(procs)
        shutil.rmtree(root, ignore_errors=True)


def executor_pids() -> list:
    """The PIDs of this machine's Spark executor JVMs (CoarseGrainedExecutorBackend)."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if b"CoarseGrainedExecutorBackend" in f.read():
                    pids.append(int(name))
        except OSError:
            continue
    return sorted(pids)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="A Spark standalone cluster on 127.0.0.1 for zabmc.")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cores", type=int, default=1)
    ap.add_argument("--memory", default="1g")
    a = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    with standalone_cluster(a.workers, a.cores, a.memory) as url:
        print(url, flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
