#!/usr/bin/env python3
"""Pick a small committed corpus from a large one: the inputs that together cover the most.

    fuzz/select_corpus.py TARGET COUNT [FROM_DIR]

Runs libFuzzer's merge over FROM_DIR (default fuzz/.corpus-work/TARGET, what fuzz/run.sh
found) plus the committed fuzz/corpus/TARGET, reads the features each input covers from the
merge control file, and greedily keeps the COUNT inputs that add the most new features
(largest gain first; ties go to the smaller file). Those replace fuzz/corpus/TARGET.
Build first (fuzz/run.sh does), and run `fuzz/run.sh export` afterwards.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FUZZ = Path(__file__).resolve().parent


def host_triple() -> str:
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    return next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("host: "))


def features(binary: Path, dirs: list[Path]) -> tuple[list[Path], list[set[int]]]:
    """Each input file and the set of features (edges and counters) it covers, from a merge control file."""
    with tempfile.TemporaryDirectory() as tmp:
        control = Path(tmp) / "control"
        out = Path(tmp) / "out"
        out.mkdir()
        subprocess.run(
            [str(binary), "-merge=1", f"-merge_control_file={control}", "-rss_limit_mb=4096", "-timeout=30", str(out), *map(str, dirs)],
            check=True,
            capture_output=True,
        )
        lines = control.read_text().splitlines()
    count = int(lines[0])
    files = [Path(p) for p in lines[2 : 2 + count]]
    covered: list[set[int]] = [set() for _ in files]
    for line in lines[2 + count :]:
        if line.startswith("FT "):
            _, index, *fts = line.split()
            covered[int(index)] = {int(f) for f in fts}
    return files, covered


def main() -> None:
    target, count = sys.argv[1], int(sys.argv[2])
    source = Path(sys.argv[3]) if len(sys.argv) > 3 else FUZZ / ".corpus-work" / target
    committed = FUZZ / "corpus" / target
    binary = FUZZ / "target" / host_triple() / "release" / target
    files, covered = features(binary, [d for d in (source, committed) if d.is_dir()])
    total = set().union(*covered) if covered else set()
    chosen: list[int] = []
    have: set[int] = set()
    while len(chosen) < count:
        best = max(
            (i for i in range(len(files)) if i not in chosen),
            key=lambda i: (len(covered[i] - have), -files[i].stat().st_size),
            default=None,
        )
        if best is None or not covered[best] - have:
            break
        chosen.append(best)
        have |= covered[best]
    keep = [files[i].read_bytes() for i in chosen]
    names = [files[i].name for i in chosen]
    shutil.rmtree(committed, ignore_errors=True)
    committed.mkdir(parents=True)
    for name, data in zip(names, keep):
        (committed / name).write_bytes(data)
    print(f"{target}: kept {len(chosen)} of {len(files)} inputs, covering {len(have)} of {len(total)} features")


if __name__ == "__main__":
    main()
