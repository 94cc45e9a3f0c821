"""sha256 digests of files: the lecture's code (a row's `fingerprint`) and a build's inputs.

Below run.py, coverage.py and table.py, which all name the code a result was computed on.
"""

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def digest_of(files) -> str:
    """sha256 of (path, bytes) pairs, in the order given."""
    h = hashlib.sha256()
    for name, data in files:
        h.update(name.encode() + b"\0" + data + b"\0")
    return h.hexdigest()


def digest(root: Path, names) -> str:
    return digest_of((name, Path(root, name).read_bytes()) for name in sorted(names))


def code_fingerprint(root: Path = ROOT) -> str:
    """sha256 of the lecture's code: every src/**/*.py, path and bytes."""
    return digest(root, [str(p.relative_to(root)) for p in Path(root, "src").rglob("*.py")])
