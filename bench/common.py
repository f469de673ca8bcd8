"""Shared helpers for the bigstep benchmark scripts (bench/paper/, bench/perf/, bench/experiments/).

Only the Python standard library, numpy and matplotlib are used. The simulator is driven
through its CLI (`bigstep run CONFIG --set key=value ... --out DIR --quiet`), never linked.

- find_binary():   $BIGSTEP_BIN, else <repo>/build/bigstep
- run_scene():     one CLI run with overrides into a temp dir -> RunResult (summary + steps rows)
- run_many():      a list of jobs on a pool of at most 2 workers (this is a 2-core CPU box)
- machine_info():  CPU model, cores, date, git commit, binary, load average (result headers)
- write_csv():     CSV + a <name>.meta.json sidecar (command, date, CPU, git commit, ...)
"""
from __future__ import annotations

import concurrent.futures as cf
import csv
import datetime as _dt
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"  # paper/ and perf/ scripts
EXPERIMENT_RESULTS = REPO / "bench" / "experiments" / "results"  # experiments/ scripts
CONFIGS = REPO / "configs"
MAX_WORKERS = 2  # never more: the reference box has 2 cores


def find_binary() -> Path:
    """The bigstep executable: $BIGSTEP_BIN if set, else <repo>/build/bigstep."""
    env = os.environ.get("BIGSTEP_BIN")
    p = Path(env).expanduser() if env else REPO / "build" / "bigstep"
    if not p.is_file() or not os.access(p, os.X_OK):
        raise SystemExit(
            f"bigstep binary not found or not executable: {p}\n"
            "build it, e.g.\n"
            f"  cmake -S {REPO} -B {REPO}/build-bench -DCMAKE_BUILD_TYPE=Release -DBIGSTEP_CUDA=OFF\n"
            f"  cmake --build {REPO}/build-bench -j2 --target bigstep\n"
            f"and set BIGSTEP_BIN={REPO}/build-bench/bigstep")
    return p.resolve()


def find_bench_binary() -> Path:
    """The benchmark harness bigstep-bench, built beside the bigstep executable (find_binary)."""
    p = find_binary().parent / "bigstep-bench"
    if not p.is_file() or not os.access(p, os.X_OK):
        raise SystemExit(f"bigstep-bench not found beside {find_binary()}: build the target bigstep_bench")
    return p


def fmt_value(v: Any) -> str:
    """A --set value as YAML text (floats with full precision, lists as [a, b])."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt_value(x) for x in v) + "]"
    return str(v)


def config_path(name: str) -> Path:
    p = Path(name)
    if p.suffix not in (".yaml", ".yml"):
        p = CONFIGS / f"{name}.yaml"
    elif not p.is_absolute():
        p = (REPO / p) if (REPO / p).exists() else p
    return p


@dataclass
class RunResult:
    config: str
    overrides: dict
    rc: int | None  # None: killed by the timeout
    elapsed_s: float  # wall clock of the whole process (start-up and file output included)
    summary: dict = field(default_factory=dict)
    steps: list = field(default_factory=list)  # dicts: step,t,iterations,residual,status,wall_s,converged
    stderr: str = ""
    timed_out: bool = False
    command: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.summary) and not self.timed_out


def step_converged(status: str) -> bool:
    s = status.lower()
    return not ("not_converged" in s or "fail" in s or "abort" in s)


def _read_steps(path: Path) -> list:
    rows = []
    if not path.is_file():
        return rows
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            rows.append({
                "step": int(r["step"]),
                "t": float(r["t"]),
                "iterations": int(r["iterations"]),
                "residual": float(r["residual"]),
                "status": r["status"],
                "wall_s": float(r["wall_s"]),
                # summed normal contact force [N] (StepStats::normal_force; nan in older outputs)
                "normal_force_N": float(r.get("normal_force_N") or "nan"),
                "converged": step_converged(r["status"]),
            })
    return rows


def run_scene(config: str, overrides: Mapping[str, Any] | None = None, *, timeout: float | None = None,
              binary: Path | None = None, keep_dir: Path | None = None) -> RunResult:
    """Runs `bigstep run CONFIG --set k=v ... --out TMP --quiet` and parses its outputs.

    Exit code 1 (some step did not converge) is a valid result: the summary is still read.
    With keep_dir the outputs are written there instead of a temporary directory.
    """
    binary = binary or find_binary()
    cfg = config_path(config)
    overrides = dict(overrides or {})
    sets = []
    for k, v in overrides.items():
        sets += ["--set", f"{k}={fmt_value(v)}"]
    with tempfile.TemporaryDirectory(prefix="bigstep-bench-") as tmp:
        out = Path(keep_dir) if keep_dir else Path(tmp) / "out"
        cmd = [str(binary), "run", str(cfg), *sets, "--out", str(out), "--quiet"]
        t0 = time.perf_counter()
        timed_out = False
        try:
            cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            rc, err = cp.returncode, cp.stderr
        except subprocess.TimeoutExpired as e:
            rc, timed_out = None, True
            err = (e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or ""))
        elapsed = time.perf_counter() - t0
        res = RunResult(config=str(cfg), overrides=overrides, rc=rc, elapsed_s=elapsed,
                        stderr=err.strip(), timed_out=timed_out, command=shlex.join(cmd))
        if not timed_out:
            sp = out / "summary.json"
            if sp.is_file():
                res.summary = json.loads(sp.read_text())
            res.steps = _read_steps(out / "steps.csv")
        if rc == 2:  # bad usage/config: a bug in the benchmark script, not a result
            raise RuntimeError(f"bigstep rejected the run ({res.stderr}): {res.command}")
    return res


def run_many(jobs: Sequence[tuple], *, workers: int = MAX_WORKERS, timeout: float | None = None,
             binary: Path | None = None, progress: bool = True) -> list:
    """jobs: (key, config, overrides) tuples -> list of (key, RunResult) in job order."""
    workers = max(1, min(int(workers), MAX_WORKERS))
    binary = binary or find_binary()
    results: list = [None] * len(jobs)
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(max_workers=workers) as ex:
        futs = {ex.submit(run_scene, cfg, ov, timeout=timeout, binary=binary): i
                for i, (_, cfg, ov) in enumerate(jobs)}
        done = 0
        for fut in cf.as_completed(futs):
            i = futs[fut]
            results[i] = (jobs[i][0], fut.result())
            done += 1
            if progress:
                r = results[i][1]
                tag = "TIMEOUT" if r.timed_out else f"rc={r.rc}"
                print(f"  [{done:>3}/{len(jobs)}] {time.perf_counter() - t0:7.1f}s  {jobs[i][0]}  "
                      f"{tag}  ({r.elapsed_s:.2f}s)", file=sys.stderr, flush=True)
    return results


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine_info(binary: Path | None = None) -> dict:
    """Header information for result files."""
    binary = binary or find_binary()
    st = binary.stat()
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    try:
        import numpy
        import matplotlib
        libs = {"numpy": numpy.__version__, "matplotlib": matplotlib.__version__}
    except ImportError:  # pragma: no cover
        libs = {}
    return {
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "loadavg_1_5_15": list(os.getloadavg()),
        "host": platform.node(),
        "os": platform.platform(),
        "python": platform.python_version(),
        **libs,
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(dirty),
        "git_dirty_files": dirty.splitlines()[:20],
        "git_note": "HEAD and tracked-file changes when the script ran; the binary is whatever "
                    "was built at binary_mtime",
        "binary": str(binary),
        "binary_mtime": _dt.datetime.fromtimestamp(st.st_mtime).astimezone().isoformat(timespec="seconds"),
    }


def command_line() -> str:
    """The command that produced the results, relative to the repository root."""
    script = Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(REPO)
    except ValueError:
        pass
    env = f"BIGSTEP_BIN={os.environ['BIGSTEP_BIN']} " if "BIGSTEP_BIN" in os.environ else ""
    return env + shlex.join(["python3", str(script), *sys.argv[1:]])



def callgrind(args: Sequence[str], out_file: Path, *, inclusive: bool, env: Mapping[str, str] | None = None):
    """Runs args under valgrind --tool=callgrind -> (total Ir, {function: Ir}) from
    callgrind_annotate (inclusive or self costs, summed over a function's instances)."""
    import re
    # a set OMP_WAIT_POLICY keeps the bigstep CLI from re-executing itself (batch/omp_wait.h), which
    # valgrind would not follow: the counts would then cover only the start-up
    run_env = {"OMP_WAIT_POLICY": "passive", **os.environ, **(env or {})}
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", *args],
                   capture_output=True, text=True, env=run_env)
    total = 0
    for line in Path(out_file).read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            total = int(line.split()[1])
            break
    ann = subprocess.run(["callgrind_annotate", f"--inclusive={'yes' if inclusive else 'no'}", "--threshold=100",
                          str(out_file)], capture_output=True, text=True).stdout
    fn: dict = {}
    for line in ann.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*)$", line)
        if m and ":" in m.group(2):
            name = m.group(2).split(" [")[0]
            fn[name] = fn.get(name, 0) + int(m.group(1).replace(",", ""))
    return total, fn

def write_csv(path: Path, rows: Iterable[Mapping[str, Any]], fieldnames: Sequence[str],
              meta: Mapping[str, Any] | None = None) -> Path:
    """Writes a plain CSV and, when meta is given, <path without .csv>.meta.json beside it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(fieldnames), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: _csv_cell(r.get(k, "")) for k in fieldnames})
    if meta is not None:
        mp = path.with_suffix(".meta.json")
        mp.write_text(json.dumps({"file": path.name, **meta}, indent=2) + "\n")
    return path


def plot_stamp(meta: Mapping[str, Any]) -> str:
    """'cpu, git abcdef1234 (dirty), date': the provenance line every bench plot carries."""
    dirty = " (dirty)" if meta["git_dirty"] else ""
    return f"{meta['cpu']}, git {meta['git_commit'][:10]}{dirty}, {meta['date']}"


def _csv_cell(v: Any) -> Any:
    if hasattr(v, "item") and not isinstance(v, (str, bytes)) and getattr(v, "ndim", None) == 0:
        v = v.item()  # numpy scalars: numpy 2's repr would write "np.float64(...)"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, bool):
        return int(v)
    return "" if v is None else v


def print_table(rows: Sequence[Mapping[str, Any]], cols: Sequence[str], fmts: Mapping[str, str] | None = None,
                file=sys.stdout) -> None:
    fmts = dict(fmts or {})

    def cell(r, c):
        v = r.get(c, "")
        if v is None or v == "":
            return "-"
        f = fmts.get(c)
        if f and isinstance(v, (int, float)) and not isinstance(v, bool):
            return format(v, f)
        return str(v)

    table = [[c for c in cols]] + [[cell(r, c) for c in cols] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
    for j, row in enumerate(table):
        print("  ".join(s.rjust(w) for s, w in zip(row, widths)), file=file)
        if j == 0:
            print("  ".join("-" * w for w in widths), file=file)
