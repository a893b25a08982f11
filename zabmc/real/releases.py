"""ZooKeeper releases from Maven Central, for `zabmc real --release X.Y.Z` (#63).

A release is `org.apache.zookeeper:zookeeper:X.Y.Z` with its runtime dependencies, resolved by
the user's own Maven (`mvn`, with its settings and mirrors) from a small pom zabmc writes (see
`pom`): the release's artifact; logback-classic, which 3.8's pom declares a compile dependency
but 3.9's an optional runtime one, so that a plain resolution of 3.9 has no slf4j backend; the
jars of the release's binary tarball that a server needs and the pom declares `provided`
(metrics-core, which ServerMetrics loads at the start; snappy-java; commons-cli), all at the
versions the release's parent pom manages; and Byteman's agent. `mvn dependency:copy-dependencies`
copies the jars once per release into the cache:

    $XDG_CACHE_HOME/zabmc/releases/X.Y.Z/      (~/.cache/zabmc/releases/X.Y.Z/ without it)
        pom.xml        the pom, saying which zabmc command wrote it
        lib/*.jar      the classpath the servers run with
        agent/byteman-*.jar
        fetched.json   the Maven command, when, and the jars (written last: a release is cached
                       only once it exists)

The list of versions Maven Central serves comes from the repository's maven-metadata.xml of
org.apache.zookeeper:zookeeper, which `mvn dependency:get` of the LATEST pom stores in the local
repository; zabmc keeps a copy in releases/versions.json for a day.

Nothing here prints. Whatever is missing (mvn, the network, a version) raises `UsageError` with
one line naming it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from zabmc.core.errors import UsageError

GROUP, ARTIFACT = "org.apache.zookeeper", "zookeeper"
#: the oldest release `--release` runs: the zk models follow 3.8 and 3.9, and their parent poms
#: manage logback (3.7's and older log through log4j 1.2 and would need another pom)
OLDEST = (3, 8, 0)
#: Byteman's agent for a release: Debian bookworm's libbyteman-java is 4.0.20 (what the Debian
#: runs use); 4.0.24 is the version on Maven Central at the time of writing, also for Java 17+
BYTEMAN = ("org.jboss.byteman", "byteman", "4.0.24")
#: the release CI runs beside Debian's 3.8.0 (`make install-test` fetches it): the newest that
#: Maven Central serves whole on 2026-11-29. Its metadata lists 3.8.7 and 3.9.6 too, but
#: org.apache.zookeeper:parent's poms of those are not found there, so Maven cannot resolve them.
CI_RELEASE = "3.9.5"
#: every release from OLDEST that Maven Central serves whole (the same 2026-11-29 listing, tried
#: again on 2026-11-30: 3.8.7's and 3.9.6's parent poms still not found): the suite type-checks
#: every hook rule and log text on each (tests/test_real_releases.py)
SERVED = ("3.8.0", "3.8.1", "3.8.2", "3.8.3", "3.8.4", "3.8.5", "3.8.6",
          "3.9.0", "3.9.1", "3.9.2", "3.9.3", "3.9.4", "3.9.5")
#: bumped when `pom` changes, so that a release cached with an older pom is fetched again
POM_REVISION = 2
VERSIONS_MAX_AGE = 24 * 3600  # seconds the cached list of versions is used without asking Maven
MVN_TIMEOUT = 600

_VERSION_RE = re.compile(r"(\d+)\.(\d+)\.(\d+)")
#: Maven's error lines that introduce the real one
_GENERIC = ("Some problems were encountered", "The build could not read", "The project ")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def cache_root() -> Path:
    """$XDG_CACHE_HOME/zabmc/releases, or ~/.cache/zabmc/releases (as install.byteman_cache_jar)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "zabmc" / "releases"


def parse_version(text: str) -> tuple:
    """(major, minor, patch) of "X.Y.Z"; UsageError for anything else or a release before 3.8.0."""
    m = _VERSION_RE.fullmatch(str(text).strip())
    if not m:
        raise UsageError(f"--release {text}: a ZooKeeper release is X.Y.Z, e.g. 3.9.5")
    v = tuple(int(g) for g in m.groups())
    if v < OLDEST:
        oldest = ".".join(map(str, OLDEST))
        raise UsageError(f"--release {text}: zabmc real runs ZooKeeper {oldest} "
                         "and newer (older releases log through log4j 1.2: --zookeeper DIR)")
    return v


def release_dir(version: str) -> Path:
    return cache_root() / version


def is_cached(version: str) -> bool:
    try:
        meta = json.loads((release_dir(version) / "fetched.json").read_text())
    except (OSError, ValueError):
        return False
    return meta.get("pom_revision") == POM_REVISION


def cached_versions() -> list[str]:
    root = cache_root()
    if not root.is_dir():
        return []
    out = [p.name for p in root.iterdir() if _VERSION_RE.fullmatch(p.name) and is_cached(p.name)]
    return sorted(out, key=lambda v: tuple(map(int, v.split("."))))


def find_mvn() -> str:
    """`mvn`: $ZABMC_MVN, else the one on PATH."""
    env = os.environ.get("ZABMC_MVN")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise UsageError(f"ZABMC_MVN={env}: not an executable Maven")
        return env
    mvn = shutil.which("mvn")
    if not mvn:
        raise UsageError("Maven (mvn) not found: apt-get install maven "
                         "(zabmc real --release fetches ZooKeeper from Maven Central with it)")
    return mvn


def pom(version: str) -> str:
    """The pom whose runtime dependencies are release `version`'s classpath and Byteman."""
    g, a, b = BYTEMAN
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- written by zabmc real's release option for {version} (zabmc/real/releases.py, pom):
     ZooKeeper {version} from Maven
     Central with its runtime dependencies; logback-classic, metrics-core, snappy-java and
     commons-cli (which its pom declares provided or optional, and its binary tarball's lib/
     has) at the versions the release's parent pom manages; Byteman's agent.
     `mvn dependency:copy-dependencies` copies them to lib/ -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>zabmc.real</groupId>
  <artifactId>zookeeper-release</artifactId>
  <version>{version}</version>
  <packaging>pom</packaging>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>{GROUP}</groupId><artifactId>parent</artifactId><version>{version}</version>
        <type>pom</type><scope>import</scope>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency><groupId>{GROUP}</groupId><artifactId>{ARTIFACT}</artifactId><version>{version}</version></dependency>
    <dependency><groupId>ch.qos.logback</groupId><artifactId>logback-classic</artifactId></dependency>
    <dependency><groupId>io.dropwizard.metrics</groupId><artifactId>metrics-core</artifactId></dependency>
    <dependency><groupId>org.xerial.snappy</groupId><artifactId>snappy-java</artifactId></dependency>
    <dependency><groupId>commons-cli</groupId><artifactId>commons-cli</artifactId></dependency>
    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{b}</version></dependency>
  </dependencies>
</project>
"""


def _mvn(args: list, cwd: Path, what: str) -> str:
    """Run mvn in batch mode; its output, or UsageError with Maven's first error line."""
    argv = [find_mvn(), "-B", "-ntp", "-Dstyle.color=never"] + list(args)
    try:
        p = subprocess.run(argv, cwd=str(cwd), capture_output=True, text=True,
                           timeout=MVN_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise UsageError(f"Maven did not {what} within {MVN_TIMEOUT} s") from None
    except OSError as e:
        raise UsageError(f"Maven could not be run ({argv[0]}: {e.strerror})") from None
    if p.returncode != 0:
        text = _ANSI.sub("", p.stdout + p.stderr)
        errs = [re.sub(r"^(\[ERROR\]\s*)+", "", ln).strip() for ln in text.splitlines()
                if ln.startswith("[ERROR]")]
        errs = [e for e in errs if e and not e.startswith(_GENERIC)]
        why = errs[0] if errs else (text.strip().splitlines() or ["no output"])[-1]
        why = re.sub(r"\.? This failure was cached in the local repository.*", "", why)
        why = re.sub(r"\s*(@ line \d+, column \d+\s*)?(->\s*\[Help \d+\])?$", "", why)
        if len(why) > 300:
            why = why[:297] + "..."
        raise UsageError(f"Maven could not {what}: {why}")
    return _ANSI.sub("", p.stdout)


# ------------------------------------------------------------------------- versions

def _versions_file() -> Path:
    return cache_root() / "versions.json"


def _local_repo(mvn_dir: Path) -> Path:
    out = _mvn(["-q", "help:evaluate", "-Dexpression=settings.localRepository", "-DforceStdout"],
               mvn_dir, "say where its local repository is")
    return Path(out.strip().splitlines()[-1].strip())


def _fetch_versions() -> dict:
    with tempfile.TemporaryDirectory(prefix="zabmc-mvn-") as tmp:
        _mvn(["-q", "-U", "dependency:get", f"-Dartifact={GROUP}:{ARTIFACT}:LATEST:pom",
              "-Dtransitive=false"], Path(tmp), f"read {GROUP}:{ARTIFACT}'s versions")
        repo = _local_repo(Path(tmp))
    d = repo / Path(*GROUP.split(".")) / ARTIFACT
    versions: set = set()
    files = sorted(d.glob("maven-metadata*.xml"))
    for f in files:
        try:
            root = ET.parse(f).getroot()
        except (ET.ParseError, OSError):
            continue
        versions |= {v.text.strip() for v in root.iter("version") if v.text}
    if not versions:
        raise UsageError(f"Maven stored no list of {GROUP}:{ARTIFACT}'s versions under {d}")
    return {"source": f"mvn -U dependency:get -Dartifact={GROUP}:{ARTIFACT}:LATEST:pom, then "
                      + ", ".join(str(f) for f in files),
            "fetched": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "fetched_epoch": time.time(),
            "versions": sorted(versions, key=_sort_key)}


def _sort_key(v: str):
    return tuple(int(x) if x.isdigit() else -1 for x in re.split(r"[.-]", v))


def available_versions(refresh: bool = False) -> tuple[list[str], str]:
    """Every release (X.Y.Z, 3.8.0 and newer) Maven Central serves, and where the list came
    from; the cached list when younger than a day (or when Maven cannot be asked)."""
    f = _versions_file()
    cached = None
    try:
        cached = json.loads(f.read_text())
    except (OSError, ValueError):
        pass
    stale = (cached is None or refresh
             or time.time() - cached.get("fetched_epoch", 0) > VERSIONS_MAX_AGE)
    note = ""
    if stale:
        try:
            cached = _fetch_versions()
            f.parent.mkdir(parents=True, exist_ok=True)
            tmp = f.with_suffix(".tmp")
            tmp.write_text(json.dumps(cached, indent=1) + "\n")
            os.replace(tmp, f)
        except UsageError as e:
            if cached is None:
                raise
            note = f" (could not refresh it: {e})"
    vs = [v for v in cached["versions"] if _VERSION_RE.fullmatch(v)
          and tuple(map(int, v.split("."))) >= OLDEST]
    return vs, f"{f}, fetched {cached.get('fetched', '?')}{note}"


# ------------------------------------------------------------------------- fetching

def fetch(version: str) -> Path:
    """Release `version`'s directory in the cache, fetching it with Maven when not there yet."""
    parse_version(version)
    final = release_dir(version)
    if is_cached(version):
        return final
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=root))
    try:
        (tmp / "pom.xml").write_text(pom(version))
        args = ["-q", "dependency:copy-dependencies", "-DoutputDirectory=lib",
                "-DincludeScope=runtime"]
        try:
            _mvn(args, tmp, f"fetch ZooKeeper {version} ({GROUP}:{ARTIFACT}:{version})")
        except UsageError as e:
            _failure_file(version).write_text(json.dumps({
                "release": version, "reason": str(e),
                "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=1) + "\n")
            raise
        lib = tmp / "lib"
        agent = tmp / "agent"
        agent.mkdir()
        for j in lib.glob(f"{BYTEMAN[1]}-*.jar"):
            j.rename(agent / j.name)
        jars = sorted(p.name for p in lib.glob("*.jar"))
        if f"{ARTIFACT}-{version}.jar" not in jars:
            raise UsageError(f"Maven fetched no {ARTIFACT}-{version}.jar for ZooKeeper {version}")
        (tmp / "fetched.json").write_text(json.dumps({
            "release": version, "pom_revision": POM_REVISION,
            "command": "mvn -B -ntp " + " ".join(args) + " (in this directory, with pom.xml)",
            "fetched": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "jars": jars, "agent": sorted(p.name for p in agent.glob("*.jar"))}, indent=1) + "\n")
        _failure_file(version).unlink(missing_ok=True)
        if final.exists():  # a partial copy, or another process was quicker
            if is_cached(version):
                return final
            shutil.rmtree(final, ignore_errors=True)
        try:
            os.rename(tmp, final)
        except OSError:
            if not is_cached(version):
                raise UsageError(f"cannot store ZooKeeper {version} in {final}") from None
        return final
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _failure_file(version: str) -> Path:
    """Where the last failed fetch of `version` is recorded, for --releases."""
    return cache_root() / f"{version}.failed.json"


def last_failure(version: str) -> str | None:
    try:
        return json.loads(_failure_file(version).read_text())["at"]
    except (OSError, ValueError, KeyError):
        return None


def check_known(version: str) -> None:
    """UsageError when Maven Central's list (cached or fetched) lacks `version`; nothing when
    the list cannot be had (Maven's own answer then says)."""
    parse_version(version)
    if is_cached(version):
        return
    try:
        vs, _ = available_versions()
    except UsageError:
        return
    if version not in vs:
        newest = vs[-1] if vs else "?"
        raise UsageError(f"ZooKeeper {version} is not on Maven Central (newest: {newest}; "
                         "zabmc real --releases lists them)")


def lib_dir(version: str) -> str:
    """The release's jar directory, fetched if needed: what `find_zookeeper` takes."""
    check_known(version)
    return str(fetch(version) / "lib")


def byteman_jar(version: str) -> str | None:
    """The Byteman agent fetched with release `version` (None if it is not cached)."""
    jars = sorted((release_dir(version) / "agent").glob(f"{BYTEMAN[1]}-*.jar"))
    return str(jars[-1]) if jars else None


def listing(refresh: bool = False) -> tuple[list[tuple[str, str]], list[str]]:
    """For `zabmc real --releases`: (version, status) rows and notes. Status is "cached" (with
    its directory) or "fetchable"; Debian's build is listed first when installed."""
    from zabmc.real.install import DEBIAN_JAR_DIR, find_zookeeper
    rows, notes = [], []
    try:
        deb = find_zookeeper(None, java="java")
        rows.append((deb.version, f"Debian's package ({DEBIAN_JAR_DIR}), the default"))
    except UsageError:
        notes.append("Debian's zookeeper package is not installed (apt-get install zookeeper)")
    cached = cached_versions()
    try:
        available, source = available_versions(refresh)
        notes.append(f"versions from Maven Central's metadata: {source}")
    except UsageError as e:
        available = []
        notes.append(f"the releases Maven Central serves are unknown: {e}")
    for v in sorted(set(cached) | set(available), key=_sort_key):
        if v in cached:
            rows.append((v, f"cached in {release_dir(v)}"))
        elif last_failure(v):
            rows.append((v, f"listed, but Maven could not fetch it at {last_failure(v)} "
                            f"(see {_failure_file(v)})"))
        else:
            rows.append((v, "fetchable"))
    return rows, notes


def main(argv: list | None = None) -> int:
    """`python -m zabmc.real.releases [X.Y.Z]`: fetch a release into the cache (CI_RELEASE by
    default; what `make install-test` runs); its directory, or one line and exit 2."""
    import sys
    args = sys.argv[1:] if argv is None else list(argv)
    version = args[0] if args else CI_RELEASE
    try:
        check_known(version)
        print(fetch(version))
    except UsageError as e:
        print(f"zabmc: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
