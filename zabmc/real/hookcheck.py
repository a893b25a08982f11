"""Do zabmc's Byteman rules (zabmc/real/hooks.py) apply to a ZooKeeper build? (#63)

Byteman ships a rule checker, `org.jboss.byteman.check.TestScript` (in byteman.jar itself): it
parses each rule of a script, loads the rule's class from the classpath it runs with, finds the
method, injects the rule at its location and type-checks its condition and actions against the
method. For each rule that passes it prints `Type checked rule "NAME"`; a rule whose class or
method is missing, or whose location or expressions do not fit, gets an ERROR or WARNING line
instead ("Unable to transform class C using rule "NAME" ..." for a method that is not there).

`check(dist, byteman)` runs it on the script `hooks.script` writes, with the build's jars, and
says for each hook point whether it applies: both of its rules (the hold in the point's method,
the release in RuokCommand.commandRun) must type-check. What it cannot see: whether the method
still does what the point's `source` says (a release that moved the flush elsewhere); that is
what the runs' conformance checks and the hold lines they wait on catch.

A result is cached per build, Byteman jar and script (a JVM start each time otherwise) under
$XDG_CACHE_HOME/zabmc/hook-checks/.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

from . import hooks

CHECKER = "org.jboss.byteman.check.TestScript"
_CONTROL = "/zabmc-hook-check"  # the control dir the checked script names (never touched)


def _cache_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "zabmc" / "hook-checks"


def _key(classpath: list, byteman: str, script: str) -> str:
    h = hashlib.sha256(script.encode())
    for p in list(classpath) + [byteman]:
        try:
            st = os.stat(p)
            h.update(f"{os.path.realpath(p)}:{st.st_size}:{int(st.st_mtime)}\n".encode())
        except OSError:
            h.update(f"{p}:missing\n".encode())
    return h.hexdigest()[:24]


def rule_names(point: str) -> tuple:
    return (f"zabmc hold {point}", f"zabmc release {point}")


def parse(output: str) -> dict:
    """TestScript's output -> {point: None if it applies, else why not}."""
    lines = output.splitlines()
    checked = set(re.findall(r'Type checked rule "([^"]+)"', output))
    out = {}
    for h in hooks.CATALOGUE:
        why = []
        for name in rule_names(h.name):
            if name in checked:
                continue
            said = [ln.strip() for ln in lines if f'"{name}"' in ln
                    and not ln.startswith(("Parsed rule", "Checking rule"))]
            why.append(f"rule \"{name}\" ({h.cls if 'hold' in name else hooks.RELEASE_CLASS}."
                       f"{h.method if 'hold' in name else 'commandRun'}): "
                       + (said[0] if said else "not type-checked by Byteman's TestScript"))
        out[h.name] = "; ".join(why) if why else None
    return out


def check(classpath: list, byteman: str, java: str = "java", *, use_cache: bool = True) -> dict:
    """{point: None (applies) or why it does not} for the build whose jars are `classpath`.
    Raises OSError/subprocess errors only through a dict of the same reason for every point."""
    script = hooks.script(_CONTROL)
    key = _key(classpath, byteman, script)
    cached = _cache_dir() / f"{key}.json"
    if use_cache:
        try:
            return json.loads(cached.read_text())["points"]
        except (OSError, ValueError, KeyError):
            pass
    with tempfile.TemporaryDirectory(prefix="zabmc-hookcheck-") as tmp:
        rules = Path(tmp) / "rules.btm"
        rules.write_text(script)
        argv = [java, "-cp", os.pathsep.join([byteman] + list(classpath)), CHECKER, str(rules)]
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                               stdin=subprocess.DEVNULL)
            output = p.stdout + p.stderr
        except (OSError, subprocess.SubprocessError) as e:
            return {h.name: f"could not run Byteman's TestScript: {e}" for h in hooks.CATALOGUE}
    points = parse(output)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps({
            "command": f"java -cp BYTEMAN:CLASSPATH {CHECKER} rules.btm (zabmc/real/hookcheck.py)",
            "byteman": byteman, "classpath": list(classpath), "points": points}, indent=1) + "\n")
    except OSError:
        pass
    return points


def not_applying(points: dict) -> dict:
    return {k: v for k, v in points.items() if v}
