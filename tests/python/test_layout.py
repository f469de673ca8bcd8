"""The folders' include arrows (docs/architecture.md): a file includes only its own folder and the
folders below it, so no arrow runs back up. The CMake libraries link along the same arrows
(CMakeLists.txt), so a violation would also fail to link; this test names the file and the line."""
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# folder -> the folders its files may include (its own included)
LAYERS = ["core", "numerics", "solvers", "control", "io", "batch", "envs"]
ALLOWED = {f: set(LAYERS[: i + 1]) for i, f in enumerate(LAYERS)}
ALLOWED["cuda"] = {"core", "numerics", "solvers", "cuda"}  # kernels and their host drivers
ALLOWED["batch"] |= {"cuda"}  # the engines drive the CUDA mirror
ALLOWED["cli"] = set(LAYERS) | {"cli"}
ALLOWED["bench"] = set(LAYERS) | {"bench", "cuda"}
ALLOWED["python"] = set(LAYERS)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources():
    out = subprocess.run(["git", "ls-files", "*.h", "*.cpp", "*.cu", "*.cuh"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    return [p for p in out if p.split("/")[0] in ALLOWED]


def test_no_include_runs_back_up():
    bad = []
    files = sources()
    assert len(files) > 100, "no sources found: run from a git checkout"
    for path in files:
        folder = path.split("/")[0]
        for n, line in enumerate((ROOT / path).read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE.match(line)
            if m and "/" in m.group(1):
                target = m.group(1).split("/")[0]
                if target in ALLOWED and target not in ALLOWED[folder]:
                    bad.append(f"{path}:{n}: {folder}/ includes {m.group(1)}")
    assert not bad, "includes that run back up:\n" + "\n".join(bad)


def test_the_checker_sees_a_violation(tmp_path):
    """The pattern and the table catch an upward include (so the test above can fail)."""
    m = INCLUDE.match('#include "io/scene.h"')
    assert m and m.group(1).split("/")[0] not in ALLOWED["solvers"]
