"""Which counted claims a code bug is shown to reach: the ledger-can-fail check of the mutants.

Every counted claim (ledger.COUNTED) is one of
- flipped: some mutant of mutants/results.csv changed its status against the control (a flip
  that the second control shows too is resampling, not counted);
- unreachable: mutants/unreachable.yaml says why no bug in this project's code can reach it
  (the number is PyTorch's, say) — a reason is refused for a claim a mutant did flip, since
  the flip proves the reason wrong;
- a gap: neither; no mutant run so far flips it. The gaps are listed in the mutation table
  (README, the report's appendix): each asks for a mutant, or a reason;
- blind: a gap that the control build itself cannot decide ("not resolvable" there, in
  mutants/control-verdicts.csv): a claim decided as a rate over recorded seeds, of which the
  reduced protocol records one or two, whose 95 % interval straddles 1/2 whatever they show.
  No mutant can flip it at that protocol; closing it needs a protocol with more recorded seeds;
- short: a gap that the control decides otherwise than the full build (the committed
  report/reference/, judged by the control's ledger; the `full` column of control-verdicts.csv):
  at the reduced protocol's 200 steps the finding is not there to break (a GRU that has not
  learned yet, a head that has not parked on BOS), so a flip there would test another claim.
  Closing it needs a longer protocol for the demos it reads.

The data mutations of tests/reporting/test_ledger.py prove that a verdict is not constant;
this proves, claim by claim, that a bug in the code can change it.
"""

import csv
import sys
from pathlib import Path

import yaml

from mutants import protocol

ROOT = Path(__file__).resolve().parents[1]
REASONS = ROOT / "mutants" / "unreachable.yaml"
CONTROL = ROOT / "mutants" / "control-verdicts.csv"  # claim, status in the control build
KINDS = ("flipped", "unreachable", "gap", "blind", "short")
REFERENCE = ROOT / "report" / "reference"  # the committed full build
UNDECIDED = "unresolved"  # the ledger's status "not resolvable"


def load_reasons(path: Path = REASONS) -> dict[str, str]:
    """claim id -> why no code bug can reach it (a non-empty sentence each)."""
    reasons = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(reasons, dict):
        raise ValueError(f"{path.name}: expected a mapping claim id -> reason")
    if empty := sorted(k for k, v in reasons.items() if not isinstance(v, str) or not v.strip()):
        raise ValueError(f"{path.name}: no reason given for {empty}")
    return reasons


def flips_by_claim(results: list[dict]) -> dict[str, list[str]]:
    """claim id -> the mutants that flipped it, leaving out the second control's own flips."""
    noise = {r["mutant"]: r for r in results}.get("control-2", {}).get("verdict_flips", "")
    noise = set(noise.split())
    flipped: dict[str, list[str]] = {}
    for r in results:
        if r["mutant"] == "control-2":
            continue
        for claim in r.get("verdict_flips", "").split():
            if claim not in noise:
                flipped.setdefault(claim, []).append(r["mutant"])
    return flipped


def control_verdicts(control_dir: Path, build_dir: Path | None = None) -> dict[str, str]:
    """claim id -> its status in a finished control build (evaluated as run.counted_flips does),
    or, with `build_dir`, in that build (the full reference) judged by the control's ledger."""
    from lecture17.reporting import diff, ledger

    entries = ledger.load_ledger(control_dir / "report" / "ledger")
    build = diff.load_build(build_dir or control_dir)
    return {
        o.entry["id"]: o.status for o in ledger.evaluate_all(entries, build.tables, build.demos)
    }


def write_control_verdicts(
    verdicts: dict[str, str], fingerprint: str, path: Path = CONTROL, full: dict | None = None
):
    """claim, its status in the control, in the full build (`full`, when given), fingerprint."""
    full = full or {}
    rows = (f"{c},{s},{full.get(c, '')},{fingerprint}" for c, s in verdicts.items())
    path.write_text("\n".join(["claim,status,full,fingerprint", *rows]) + "\n", encoding="utf-8")


def record_control(control_dir: Path, fingerprint: str, path: Path = CONTROL) -> dict[str, str]:
    """Write the control's verdicts, with the full build's beside them (CONTROL); return them."""
    verdicts = control_verdicts(control_dir)
    full = control_verdicts(control_dir, REFERENCE)
    write_control_verdicts(verdicts, fingerprint[:16], path, full=full)
    return verdicts


def load_control_verdicts(path: Path = CONTROL, column: str = "status") -> dict[str, str]:
    """claim id -> its status in the control (or, column="full", in the full build)."""
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8", newline="") as f:
        return {row["claim"]: row.get(column) or "" for row in csv.DictReader(f)}


def coverage(
    counted: list[str], results: list[dict], reasons: dict[str, str], control=None, full=None
) -> dict:
    """claim id -> (kind, detail): ("flipped", [mutants]), ("unreachable", reason), ("gap", ""),
    ("blind", "") or ("short", "<control's status> -> <full build's>") for every counted claim,
    in ledger order; control / full: claim id -> its status in the control build / in the full
    build (a gap the control cannot decide is blind; one it decides otherwise than the full
    build is short).
    Refuses a reason for a claim that is not counted, or that a mutant flipped."""
    if unknown := sorted(set(reasons) - set(counted)):
        raise ValueError(f"unreachable.yaml names claims that are not counted: {unknown}")
    flipped = flips_by_claim(results)
    if wrong := sorted(set(reasons) & set(flipped)):
        detail = ", ".join(f"{c} by {' '.join(flipped[c])}" for c in wrong)
        raise ValueError(f"unreachable.yaml gives a reason for claims a mutant flipped: {detail}")
    out = {}
    for claim in counted:
        if claim in flipped:
            out[claim] = ("flipped", flipped[claim])
        elif claim in reasons:
            out[claim] = ("unreachable", reasons[claim])
        elif (control or {}).get(claim) == UNDECIDED:
            out[claim] = ("blind", "")
        elif (full or {}).get(claim) and full[claim] != (control or {}).get(claim):
            out[claim] = ("short", f"{control.get(claim)} -> {full[claim]}")
        else:
            out[claim] = ("gap", "")
    return out


def counted_claims(ledger_dir: Path = ROOT / "report" / "ledger") -> list[str]:
    from lecture17.reporting import ledger

    return [e["id"] for e in ledger.load_ledger(ledger_dir) if e["class"] in ledger.COUNTED]


def training_steps(overlay: Path = protocol.OVERLAY) -> int:
    """The steps most of the protocol's trained demos take (what the summary quotes)."""
    demos = yaml.safe_load(Path(overlay).read_text(encoding="utf-8"))["demos"]
    steps = [d.get("settings", {}).get("train", {}).get("steps") for d in demos.values()]
    steps = [s for s in steps if s is not None]
    if not steps:
        raise ValueError(f"{overlay} sets no training steps")
    return max(set(steps), key=steps.count)


def summary(cov: dict, steps: int | None = None) -> list[str]:
    """The mutation table's lines on the counted claims (Chinese, ids listed); `steps`: the
    reduced protocol's training steps (mutants/protocol.yaml's, when not given)."""
    if steps is None:
        steps = training_steps()
    by = {kind: [c for c, (k, _) in cov.items() if k == kind] for kind in KINDS}
    lines = [
        f"计入标题的 {len(cov)} 条结论 counted claims 里：被至少一个变异翻转的 flipped "
        f"{len(by['flipped'])} 条；说明了为什么代码里的错误碰不到的 unreachable "
        f"{len(by['unreachable'])} 条（`mutants/unreachable.yaml`）；其余 "
        f"{sum(len(by[k]) for k in ('gap', 'blind', 'short'))} 条还没有变异翻转过，"
        "也没有理由：缺口 gaps，"
        "每条都等一个变异或一个理由。"
    ]
    shown = {"holds": "成立", UNDECIDED: "无法分辨", "differs": "不同"}
    if by["short"]:
        said = "、".join(
            "{}（{}，完整构建{}）".format(c, *(shown.get(v, v) for v in cov[c][1].split(" -> ")))
            for c in by["short"]
        )
        lines.append(
            f"还有 {len(by['short'])} 条控制构建在缩减的协议下（训练的演示大多只训练 {steps} 步）"
            "就和完整构建（`report/reference/`）判得不同：要检验的现象在控制构建里就不一样，"
            f"变异翻转它检验的是另一件事；要补上，这些演示得用更长的协议：{said}。"
        )
    if by["gap"]:
        lines.append(f"控制构建能判定的缺口 gaps（{len(by['gap'])} 条）：{'、'.join(by['gap'])}。")
    if by["blind"]:
        lines.append(
            f"另外 {len(by['blind'])} 条在控制构建里就无法分辨 not resolvable in the control"
            "（`mutants/control-verdicts.csv`）：它们按记录的种子上的比率判定，缩减的协议只记录"
            "一两个种子，比率的 95% 区间总是跨过 1/2，所以在这个协议下没有变异能翻转它们；"
            f"要补上，协议得记录更多种子：{'、'.join(by['blind'])}。"
        )
    return lines


def main(argv=None) -> int:
    """python -m mutants.coverage CONTROL_DIR: write the control's verdicts (committed)."""
    from mutants.digests import code_fingerprint

    control_dir = Path((argv or sys.argv[1:])[0])
    verdicts = record_control(control_dir, code_fingerprint(control_dir))
    print(f"控制构建的结论 control verdicts → {CONTROL.relative_to(ROOT)}（{len(verdicts)} 条）")
    return 0


if __name__ == "__main__":
    sys.exit(main())
