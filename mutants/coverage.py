"""Which counted claims a code bug is shown to reach: the ledger-can-fail check of the mutants.

Every counted claim (ledger.COUNTED) is one of
- flipped: some mutant of mutants/results.csv changed its status against the control (a flip
  that the second control shows too is resampling, not counted);
- unreachable: mutants/unreachable.yaml says why no bug in this project's code can reach it
  (the number is PyTorch's, say) — a reason is refused for a claim a mutant did flip, since
  the flip proves the reason wrong;
- a gap: neither; no mutant run so far flips it. The gaps are listed in the mutation table
  (README, the report's appendix): each asks for a mutant, or a reason.

The data mutations of tests/reporting/test_ledger.py prove that a verdict is not constant;
this proves, claim by claim, that a bug in the code can change it.
"""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
REASONS = ROOT / "mutants" / "unreachable.yaml"
KINDS = ("flipped", "unreachable", "gap")


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


def coverage(counted: list[str], results: list[dict], reasons: dict[str, str]) -> dict:
    """claim id -> (kind, detail): ("flipped", [mutants]), ("unreachable", reason), ("gap", "")
    for every counted claim, in ledger order. Refuses a reason for a claim that is not
    counted, or that a mutant flipped."""
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
        else:
            out[claim] = ("gap", "")
    return out


def counted_claims(ledger_dir: Path = ROOT / "report" / "ledger") -> list[str]:
    from lecture17.reporting import ledger

    return [e["id"] for e in ledger.load_ledger(ledger_dir) if e["class"] in ledger.COUNTED]


def summary(cov: dict) -> list[str]:
    """The mutation table's lines on the counted claims (Chinese, ids listed)."""
    by = {kind: [c for c, (k, _) in cov.items() if k == kind] for kind in KINDS}
    lines = [
        f"计入标题的 {len(cov)} 条结论 counted claims 里：被至少一个变异翻转的 flipped "
        f"{len(by['flipped'])} 条；说明了为什么代码里的错误碰不到的 unreachable "
        f"{len(by['unreachable'])} 条（`mutants/unreachable.yaml`）；其余 {len(by['gap'])} 条"
        "还没有变异翻转过，也没有理由：缺口 gaps，每条都等一个变异或一个理由。"
    ]
    if by["gap"]:
        lines.append(f"缺口 gaps：{'、'.join(by['gap'])}。")
    return lines
