"""Finding what a real ensemble needs: a Java runtime, a ZooKeeper build and (optionally) Byteman.

Each finder returns what it found or raises `UsageError` with a one-line install hint; nothing
here prints. The default ZooKeeper is Debian's package (`apt-get install zookeeper`), whose jar
names its dependencies in its manifest's Class-Path; `--zookeeper DIR` takes any build as a
directory of jars (a release's lib/, a patched build).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from zabmc.core.errors import UsageError

DEBIAN_JAR_DIR = "/usr/share/java"
QUORUM_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
_MAIN_CLASS_FILE = QUORUM_MAIN.replace(".", "/") + ".class"

# slf4j backends: a jar whose name starts with one of these makes a directory "have a backend"
_BACKEND_PREFIXES = ("slf4j-log4j12", "slf4j-reload4j", "logback-classic", "slf4j-simple",
                     "slf4j-jdk14", "log4j-slf4j-impl", "log4j-slf4j2-impl")
# what we add to a directory without one: Debian's slf4j 1.7 binding to log4j 1.2
_DEBIAN_BACKEND = ("slf4j-log4j12.jar", "log4j-1.2.jar")


@dataclass(frozen=True)
class ZooKeeperDist:
    """A ZooKeeper build a server can be launched from."""

    classpath: list[str]
    version: str
    jar_dir: str
    main_class: str = QUORUM_MAIN
    # which logging backend the classpath has: "log4j" (1.2 or reload4j), "logback" or "other"
    backend: str = "log4j"
    notes: list[str] = field(default_factory=list)


def find_java() -> str:
    """The `java` to launch servers with: $JAVA_HOME/bin/java, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        cand = Path(home) / "bin" / "java"
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    found = shutil.which("java")
    if found:
        return found
    raise UsageError("Java not found: apt-get install default-jre-headless (Java 11 or newer), "
                     "or set JAVA_HOME")


def _jar_has_main(jar: Path) -> bool:
    try:
        with zipfile.ZipFile(jar) as z:
            z.getinfo(_MAIN_CLASS_FILE)
            return True
    except (KeyError, OSError, zipfile.BadZipFile):
        return False


def _manifest_version(jar: Path) -> str | None:
    try:
        with zipfile.ZipFile(jar) as z:
            text = z.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    except (KeyError, OSError, zipfile.BadZipFile):
        return None
    # manifest lines wrap at 72 bytes with a leading space on continuations
    text = re.sub(r"\r?\n ", "", text)
    for key in ("Implementation-Version", "Bundle-Version", "Specification-Version"):
        m = re.search(rf"^{key}:\s*(\S+)", text, re.M)
        if m:
            return m.group(1)
    return None


def _version_from_name(jar: Path) -> str | None:
    m = re.fullmatch(r"zookeeper-(\d+\.\d+\.\d+[\w.-]*)\.jar", Path(os.path.realpath(jar)).name)
    return m.group(1) if m else None


def _version_from_java(java: str, classpath: list[str]) -> str | None:
    # org.apache.zookeeper.version.VersionInfoMain prints "Apache ZooKeeper, version X BUILD"
    try:
        out = subprocess.run([java, "-cp", os.pathsep.join(classpath),
                              "org.apache.zookeeper.version.VersionInfoMain"],
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"version\s+(\S+)", out)
    return m.group(1) if m else None


def _backend_of(jars: list[Path]) -> str | None:
    names = [j.name for j in jars]
    for n in names:
        if n.startswith("logback-classic"):
            return "logback"
    for n in names:
        if n.startswith(("slf4j-log4j12", "slf4j-reload4j")):
            return "log4j"
    for n in names:
        if n.startswith(_BACKEND_PREFIXES):
            return "other"
    return None


def find_zookeeper(jar_dir: str | None = None, *, java: str | None = None) -> ZooKeeperDist:
    """The ZooKeeper build to run: every jar of `jar_dir`, or Debian's package when None."""
    notes: list[str] = []
    if jar_dir is None:
        main = Path(DEBIAN_JAR_DIR) / "zookeeper.jar"
        if not main.is_file() or not _jar_has_main(main):
            raise UsageError("ZooKeeper not found: apt-get install zookeeper, "
                             "or --zookeeper DIR with its jars")
        # the Debian jar's manifest Class-Path names its dependencies (jute, netty, slf4j-api...)
        jars = [main] + [Path(DEBIAN_JAR_DIR) / n for n in ("zookeeper-jute.jar",) + _DEBIAN_BACKEND]
        missing = [str(j) for j in jars if not j.is_file()]
        if missing:
            raise UsageError(f"ZooKeeper's dependencies are missing ({', '.join(missing)}): "
                             "apt-get install zookeeper")
        classpath = [str(j) for j in jars]
        version = _manifest_version(main) or _version_from_name(main)
        backend = "log4j"
        dist_dir = DEBIAN_JAR_DIR
    else:
        d = Path(jar_dir)
        if not d.is_dir():
            raise UsageError(f"--zookeeper {jar_dir}: not a directory of jars")
        jars = sorted(p for p in d.iterdir() if p.suffix == ".jar" and p.is_file())
        mains = [j for j in jars if _jar_has_main(j)]
        if not mains:
            raise UsageError(f"--zookeeper {jar_dir}: no jar there has {QUORUM_MAIN}")
        backend = _backend_of(jars)
        if backend is None:
            extra = [Path(DEBIAN_JAR_DIR) / n for n in _DEBIAN_BACKEND]
            if all(e.is_file() for e in extra):
                jars += extra
                backend = "log4j"
                notes.append("no slf4j backend in the directory: added Debian's slf4j-log4j12 and log4j 1.2")
            else:
                backend = "other"
                notes.append("no slf4j backend found: the server logs nothing but stdout/stderr")
        classpath = [str(j) for j in jars]
        version = _manifest_version(mains[0]) or _version_from_name(mains[0])
        dist_dir = str(d.resolve())
    if version is None:
        version = _version_from_java(java or find_java(), classpath) or "unknown"
    return ZooKeeperDist(classpath=classpath, version=version, jar_dir=dist_dir,
                         backend=backend, notes=notes)


def byteman_cache_jar() -> Path:
    """Where `make install-test` extracts Debian's libbyteman-java when no system copy exists."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "zabmc" / "byteman" / "usr" / "share" / "java" / "byteman.jar"


def find_byteman() -> str | None:
    """byteman.jar: $ZABMC_BYTEMAN_JAR, Debian's /usr/share/java, then zabmc's cache; None if absent."""
    cands = []
    env = os.environ.get("ZABMC_BYTEMAN_JAR")
    if env:
        cands.append(Path(env))
    cands += [Path(DEBIAN_JAR_DIR) / "byteman.jar", byteman_cache_jar()]
    for c in cands:
        if c.is_file():
            return str(c)
    return None
