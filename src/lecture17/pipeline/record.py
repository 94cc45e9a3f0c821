"""Runs recorded on another machine (report/measured/<demo>/), and whether they still hold.

A demo that a default build cannot run (06.3 needs a GPU) is run once where it can,
`python -m lecture17 run 06.3 --device cuda --results report/measured`, and its CSVs are
committed. Beside them, `record.json` says what they were run with:

    {"demo": "06.3", "settings": {...}, "code": {"src/lecture17/...py": "<sha256>", ...},
     "registry": "beyond.gpu_step_time timings=...", "recorded": "2026-12-01T12:00:00+00:00",
     "machine": "NVIDIA H200 · Intel Xeon ...", "device": "cuda"}

`code` hashes exactly the files a job of the demo imports whole (its code inputs) and, under
"<module>.py::<names>", the lines of the experiments modules it runs only part of and of the
numpy blocks those lines reach (codehash.py); and
`registry` is the job's registry entry, so a build can tell whether the recorded runs are
what this checkout would compute: `problems()` lists every difference (settings, a changed or
missing file, the registry entry, a missing CSV) and the build uses the runs only when there is
none. `python -m lecture17 recorded check` fails on any stale recording (CI runs it).

When the code changes without changing what it computes (a refactor), the recording's
behavioural fingerprint (pipeline/fingerprint.py) vouches for it, at the price of re-running
the fingerprint in every fresh checkout. `python -m lecture17 recorded vouch
<demo>` runs it once and stores the verified code state in record.json's `vouched` list
(hashes, registry entry, machine, date): a later check of the same code is then a hash match.
The recorded `code` is never rewritten: it says what the runs were made with.
"""

import json
import platform
import shutil
from datetime import UTC, datetime
from pathlib import Path

from lecture17.pipeline import fingerprint
from lecture17.pipeline.codehash import (  # noqa: F401 - the rules read them as record's
    REGISTRY_FILE,
    code_hashes,
    function_code,
    job_code,
    part_hashes,
    registry_entry,
)
from lecture17.pipeline.csvio import timing_path
from lecture17.pipeline.job import jobs

MEASURED = "report/measured"
RECORD = "record.json"


def write(
    folder: Path,
    demo: str,
    settings: dict,
    device: str,
    machine: str = "",
    earlier: dict | None = None,
) -> None:
    """record.json for the runs of `demo` just written under `folder` (= <root>/<demo>);
    `earlier`: the jobs kept from an earlier recording (restore), with its machine and date."""
    record = {
        **({"earlier": earlier} if earlier else {}),
        "demo": demo,
        "settings": settings,
        "code": code_hashes(demo),
        "registry": registry_entry(demo),
        "recorded": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine or platform.processor() or platform.machine(),
        "device": device,
    }
    (Path(folder) / RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")


def store(
    demo: str,
    spec: dict,
    device: str,
    machine: str,
    results: str = "results",
    root: str = MEASURED,
) -> Path:
    """Record a demo's runs: copy every run CSV (and its timing CSV) of `demo` from `results`
    to <root>/<demo>/ with its record.json (the `record` rule of `snakemake robustness`).

    The copy is written beside the old recording and swapped in only when complete, so a
    killed job leaves the old recording (or none), never a mix. Returns the folder.
    """
    folder, partial = Path(root, demo), Path(root, f".{demo}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    sources = [p for path, _, _ in jobs(demo, spec, results) for p in (path, timing_path(path))]
    if missing := [str(p) for p in sources if not Path(p).is_file()]:
        raise FileNotFoundError(f"{len(missing)} run files of {demo} missing, e.g. {missing[0]}")
    for source in sources:
        target = partial / Path(source).relative_to(Path(results, demo))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    settings = {**spec["settings"], **({"device": device} if spec.get("grid") else {})}
    write(partial, demo, settings, device, machine, kept_from(folder, partial))
    old = Path(root, f".{demo}.old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    partial.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    return folder


def kept_from(old: Path, new: Path) -> dict | None:
    """The run CSVs of the new recording `new` that are byte-identical to the old one's (jobs
    restored, not rerun): their count, and the old record's machine and date (or its own
    `earlier`, when it had kept them too)."""
    before = read(old)
    if before is None:
        return None
    same = [
        p
        for p in Path(new).rglob("seed*.csv")
        if not p.name.endswith(".timing.csv")
        and (old / p.relative_to(new)).is_file()
        and (old / p.relative_to(new)).read_bytes() == p.read_bytes()
    ]
    if not same:
        return None
    source = before.get("earlier") or before
    return {"jobs": len(same), "machine": source.get("machine"), "recorded": source.get("recorded")}


def read(folder: Path) -> dict | None:
    path = Path(folder) / RECORD
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def problems(
    demo: str,
    spec: dict,
    root: str = MEASURED,
    repo: Path = Path("."),
    *,
    behaviour: bool = True,
    missing_ok: bool = False,
) -> list[str]:
    """Why the runs recorded under <root>/<demo>/ are not what this checkout's config and code
    would compute ([] when they are): each reason in a sentence, with what to do.

    Settings must be the config's exactly. Code and registry entry: the same hashes vouch at
    once; otherwise, with `behaviour` and a fingerprint beside the record (pipeline/fingerprint),
    the fingerprint is re-run on this checkout with `spec` and the recording holds while every
    value stays within its tolerance."""
    record = read(Path(root, demo))
    if record is None:
        return [f"{root}/{demo}/{RECORD} is missing"]
    found = []
    files = [p for path, _, _ in jobs(demo, spec, root) for p in (path, str(timing_path(path)))]
    missing = [p for p in files if not Path(p).is_file()]
    if missing and not missing_ok:  # missing_ok: new seeds to record (restore)
        found.append(f"{len(missing)} run files missing, e.g. {missing[0]}")
    settings = {k: v for k, v in record["settings"].items() if k != "device"}
    if settings != spec["settings"]:
        changed = sorted(
            k
            for k in set(settings) | set(spec["settings"])
            if settings.get(k) != spec["settings"].get(k)
        )
        found.append(f"recorded with other settings than the config's: {changed}")
    code = code_changes(demo, record, repo)
    if code and vouched_state(demo, record, repo):
        code = []  # this very code was verified against the fingerprint and vouched for
    if code and behaviour and not found and fingerprint.read(Path(root, demo)) is not None:
        code = fingerprint.verify(demo, spec, Path(root, demo), repo)
        code = [f"{'; '.join(code_changes(demo, record, repo))}, and its {c}" for c in code]
    return found + code


def code_changes(demo: str, record: dict, repo: Path = Path(".")) -> list[str]:
    """How this checkout's code and registry entry differ from the recording's hashes."""
    found = []
    now = code_hashes(demo, repo)
    old = record.get("code", {})
    changed = sorted(p for p in set(now) | set(old) if now.get(p) != old.get(p))
    if changed:
        found.append(f"recorded with other code: {changed}")
    if record.get("registry") != registry_entry(demo):
        found.append(
            f"recorded for registry entry {record.get('registry')!r}, now {registry_entry(demo)!r}"
        )
    return found


def vouched_state(demo: str, record: dict, repo: Path = Path(".")) -> dict | None:
    """The entry of record["vouched"] whose code and registry entry are this checkout's: a code
    state that `vouch` verified against the recording's fingerprint (None if there is none)."""
    now, entry = code_hashes(demo, repo), registry_entry(demo)
    for state in record.get("vouched", []):
        if state["code"] == now and state["registry"] == entry:
            return state
    return None


def vouch(demo: str, spec: dict, machine: str, root: str = MEASURED) -> dict | None:
    """Verify the recording's fingerprint on this checkout and, when it holds, add the code's
    hashes to record.json's `vouched` list, so that later checks of the same code are as quick
    as matching hashes; the recorded `code` stays what the runs were made with. None when the
    hashes already vouch (nothing to add); SystemExit naming the problems when it is stale."""
    record = read(Path(root, demo))
    if record is not None and not code_changes(demo, record):
        return None
    if found := problems(demo, spec, root):
        raise SystemExit(f"{demo}: not vouched for, the recording is stale here: {found}")
    if state := vouched_state(demo, record):
        return state
    state = {
        "code": code_hashes(demo),
        "registry": registry_entry(demo),
        "vouched": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine,
    }
    record["vouched"] = [*record.get("vouched", []), state]
    path = Path(root, demo, RECORD)
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return state


def vouched_by(demo: str, root: str = MEASURED, repo: Path = Path(".")) -> str:
    """'hashes' when the code is byte-identical to the recording's, 'behaviour' when only its
    fingerprint vouches (call after problems() found none)."""
    record = read(Path(root, demo)) or {}
    return "behaviour" if code_changes(demo, record, repo) else "hashes"


def restore(demo: str, spec: dict, results: str = "results", root: str = MEASURED) -> int:
    """Copy a still-valid recording's run files back into `results` (those not there yet,
    touched now), so that `snakemake robustness` runs only the jobs it lacks (new seeds) and the
    `record` rule then stores them all. A recording with other settings or other behaviour is
    refused. Returns the number of jobs restored."""
    if found := problems(demo, spec, root, missing_ok=True):
        raise ValueError(f"{root}/{demo}: not restored, the recording is stale: {found}")
    restored = 0
    for path, _, _ in jobs(demo, spec, root):
        if not Path(path).is_file():
            continue
        for source in (Path(path), timing_path(path)):
            target = Path(results, source.relative_to(root))
            if not target.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)  # copyfile: the mtime is now's
        restored += 1
    return restored


def rerun_hint(demo: str, device: str) -> str:
    return f"rerun: python -m lecture17 run {demo} --device {device} --results {MEASURED}"
