"""The one SparkSession of a zabmc process: created lazily on first use, reused afterwards.

Settings (measured on a 2-core machine, issue 6): JVM flags `-XX:+UseSerialGC
-XX:TieredStopAtLevel=1` (35-40% less CPU), UI and console progress bar off, adaptive query
execution off, shuffle partitions and default parallelism equal to the partitions the engine uses,
the driver bound to 127.0.0.1 for local masters, `PYSPARK_PYTHON` set to the running
interpreter so workers import the same zabmc, and glibc's malloc told to keep freed memory in the
Python workers (`WORKER_ENV`). `ZABMC_SPARK_CONF="key=value;..."` adds or overrides
settings; `ZABMC_SPARK_DRIVER_MEMORY` sets a local master's memory (default 4g).

Start-up noise stays out of the terminal: unless `verbose`, the JVM is launched with its stdout and
stderr redirected to `spark.log` in a run directory, and Spark's log level is ERROR. The run
directory also holds Spark's local directory (shuffle files, RDD blocks spilled to disk); it is
removed at exit unless a job failed, in which case the error message names the log.

Under `spark-submit`, the session spark-submit prepared is used; a `--master` left at its default
(`local[*]`) does not override spark-submit's master.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import uuid
import warnings

from zabmc.core.errors import UsageError, ZabmcError

DEFAULT_MASTER = "local[*]"
JVM_FLAGS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
# glibc malloc settings for the Python workers (`spark.executorEnv.*`, unless this process's
# environment sets them): keep freed memory in the heap up to 1 GiB instead of returning it to
# the kernel. A task allocates and frees buffers of tens of MB (decompressed batches, fingerprint
# arrays); by default each one comes from a fresh mmap and is paid again in page faults. Measured
# (3-node db-19, depth 22): the workers' kernel time fell from 0.8-0.9 to 0.3 s (`local[1]`) and
# from 1.4-2.0 to 0.4-1.1 s (`local[2]`), with the same peak RSS. Other C libraries ignore them.
WORKER_ENV = {"MALLOC_MMAP_THRESHOLD_": str(1 << 30), "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}
_LOCAL = re.compile(r"^local(\[(\*|[1-9][0-9]*)(,[0-9]+)?\])?$")
_REMOTE = re.compile(r"^(spark://\S+|yarn|k8s://\S+|mesos://\S+)$")


class SparkJobError(ZabmcError):
    """A Spark job failed; the message carries the first useful line and the log's path."""


class Session:
    """The live session, the master it was made for and its run directory."""

    def __init__(self, spark, master: str, run_dir: str | None, log: str | None, startup: float):
        self.spark = spark
        self.sc = spark.sparkContext
        self.master = master
        self.run_dir = run_dir
        self.log = log
        self.startup = startup  # seconds to create it (0 when reused)
        self.keep_run_dir = False


_SESSION: Session | None = None
_LOCK = threading.Lock()


def check_master(master: str) -> str:
    master = (master or "").strip()
    if not (_LOCAL.match(master) or _REMOTE.match(master)):
        raise UsageError(f"--master must be local, local[N], local[*], spark://HOST:PORT, yarn or "
                         f"k8s://URL, got {master!r}")
    return master


def local_cores(master: str) -> int | None:
    """Cores of a local master (`local` = 1, `local[*]` = this machine's), None otherwise."""
    m = _LOCAL.match(master)
    if not m:
        return None
    if not m.group(2):
        return 1
    return (os.cpu_count() or 1) if m.group(2) == "*" else int(m.group(2))


def check_partitions(partitions: int | None) -> int | None:
    if partitions is not None and partitions < 1:
        raise UsageError(f"--partitions must be at least 1, got {partitions}")
    return partitions


def extra_conf() -> dict:
    """Spark settings from `ZABMC_SPARK_CONF="key=value;key=value"`, applied last."""
    out = {}
    for item in os.environ.get("ZABMC_SPARK_CONF", "").split(";"):
        if item.strip():
            k, sep, v = item.partition("=")
            if not sep or not k.strip():
                raise UsageError(f"ZABMC_SPARK_CONF items must be key=value, got {item!r}")
            out[k.strip()] = v.strip()
    return out


def require_pyspark():
    """pyspark's SparkSession class, or a one-line UsageError saying how to install it."""
    try:
        import zstandard  # noqa: F401 - the engine's batch codec (zabmc.spark.worker)
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise UsageError(f"the Spark engine needs pyspark and zstandard ({e.name} is missing): "
                         "pip install 'zabmc[spark]' (and Java 17)") from None
    return SparkSession


def get_session(master: str = DEFAULT_MASTER, *, partitions: int | None = None,
                verbose: bool = False) -> Session:
    """The process's session for `master`, created on first use (a different master restarts it)."""
    global _SESSION
    master = check_master(master)
    check_partitions(partitions)
    with _LOCK:
        s = _SESSION
        if s is not None:
            if s.master == master or s.master == "spark-submit" and master == DEFAULT_MASTER:
                s.startup = 0.0
                return s
            stop_session()
        _SESSION = _create(master, partitions, verbose)
        return _SESSION


def stop_session() -> None:
    """Stop the session (if any) and remove its run directory."""
    global _SESSION
    s, _SESSION = _SESSION, None
    if s is None:
        return
    try:
        s.spark.stop()
    except Exception:  # noqa: BLE001 - best effort at shutdown
        pass
    if s.run_dir and not s.keep_run_dir:
        shutil.rmtree(s.run_dir, ignore_errors=True)


def _create(master: str, partitions: int | None, verbose: bool) -> Session:
    SparkSession = require_pyspark()
    from pyspark import SparkContext

    t0 = time.perf_counter()
    submitted = bool(os.environ.get("PYSPARK_GATEWAY_PORT")) and master == DEFAULT_MASTER
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    run_dir = tempfile.mkdtemp(prefix="zabmc-spark-")
    log = os.path.join(run_dir, "spark.log")
    cores = local_cores(master)
    parts = partitions or cores

    b = SparkSession.builder.appName("zabmc")
    if not submitted:
        b = b.master(master)
    conf = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.adaptive.enabled": "false",
        "spark.driver.extraJavaOptions": JVM_FLAGS,
        "spark.executor.extraJavaOptions": JVM_FLAGS,
        "spark.log.level": "WARN" if verbose else "ERROR",
        # old levels' shuffle files are removed when the driver JVM collects their RDDs, and so
        # are the reliable checkpoints of `--checkpoint DIR` that a newer one replaced
        "spark.cleaner.periodicGC.interval": "1min",
        "spark.cleaner.referenceTracking.cleanCheckpoints": "true",
        # PySpark's shuffle batching spills by RSS; the explorer's caches alone exceed the default
        "spark.python.worker.memory": "2g",
        "spark.local.dir": os.path.join(run_dir, "local"),
        # the engine's batches are zstd frames already; sweep's rows are small
        "spark.shuffle.compress": "false",
        # JVM <-> Python workers over Unix domain sockets: over TCP, every task of a small level
        # stalled ~40 ms (delayed ACKs), which was most of the per-level fixed cost
        "spark.python.unix.domain.socket.enabled": "true",
    }
    for k, v in WORKER_ENV.items():
        if k not in os.environ:
            conf[f"spark.executorEnv.{k}"] = v
    if parts:
        conf["spark.sql.shuffle.partitions"] = str(parts)
        conf["spark.default.parallelism"] = str(parts)
    if cores is not None:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
        conf["spark.driver.memory"] = os.environ.get("ZABMC_SPARK_DRIVER_MEMORY", "4g")
    conf.update(extra_conf())
    for k, v in conf.items():
        b = b.config(k, v)

    quiet = not verbose and SparkContext._gateway is None
    try:
        if quiet:
            spark = _quietly(b.getOrCreate, log)
        else:
            spark = b.getOrCreate()
    except Exception as e:  # noqa: BLE001 - Java missing, bad master, port trouble...
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        where = f" (log: {log})" if quiet else ""
        raise SparkJobError(f"cannot start Spark with master {master}: {first}{where}") from None
    if not verbose:
        spark.sparkContext.setLogLevel("ERROR")
    s = Session(spark, "spark-submit" if submitted else master, run_dir, log if quiet else None,
                time.perf_counter() - t0)
    atexit.register(stop_session)
    return s


def _quietly(fn, log_path: str):
    """Run `fn` with file descriptors 1 and 2 pointing at `log_path`, so the JVM launched meanwhile
    writes its warnings and log4j output there for good; ours are restored afterwards."""
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    saved = os.dup(1), os.dup(2)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for x in (*saved, fd):
            os.close(x)


class Cancelled(Exception):
    """The job was cancelled because the deadline passed."""


def run_job(session: Session, action, *, tick=None, deadline: float | None = None,
            what: str = "job"):
    """Run `action()` (a Spark action) in a job group on a helper thread.

    The calling thread calls `tick()` about every 0.25 s, cancels the job group on Ctrl-C (then
    re-raises KeyboardInterrupt) and when `deadline` (a `time.perf_counter()` value) passes (then
    raises `Cancelled`). Spark failures become one-line `SparkJobError`s."""
    sc = session.sc
    group = f"zabmc-{uuid.uuid4().hex[:12]}"
    box: dict = {}

    def target():
        try:
            sc.setJobGroup(group, what, interruptOnCancel=True)
            box["value"] = action()
        except BaseException as e:  # noqa: BLE001 - handed to the calling thread
            box["error"] = e

    th = threading.Thread(target=target, name=f"zabmc-{what}", daemon=True)
    th.start()
    try:
        while th.is_alive():
            th.join(0.25)
            if th.is_alive():
                if tick is not None:
                    tick()
                if deadline is not None and time.perf_counter() >= deadline:
                    sc.cancelJobGroup(group)
                    th.join()
                    raise Cancelled()
    except KeyboardInterrupt:
        sc.cancelJobGroup(group)
        th.join(10)
        raise
    if "error" in box:
        raise job_error(session, box["error"], what) from None
    return box["value"]


def job_error(session: Session, e: BaseException, what: str) -> BaseException:
    """A one-line error for a failed Spark job: the Python exception a worker raised if any."""
    if isinstance(e, (KeyboardInterrupt, ZabmcError)):
        return e
    text = str(e)
    line = None
    # a worker's Python traceback ends with "<ExceptionType>: <message>"
    for ln in text.splitlines():
        ln = ln.strip()
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt)\b.*", ln) and "py4j" not in ln:
            line = ln
            if not ln.startswith(("org.apache", "java.")):
                break
    if line is None:
        line = text.strip().splitlines()[0] if text.strip() else type(e).__name__
    session.keep_run_dir = session.log is not None
    where = f" (log: {session.log})" if session.log else ""
    return SparkJobError(f"Spark {what} failed: {line[:300]}{where}")
