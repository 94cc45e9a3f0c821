"""Render the report: the lecture's tables regenerated, each beside the lecture's own numbers.

    python -m lecture17.report --tables results/tables/*.csv --figures report/figures/*.png \
        --ledger report/ledger --views report/views \
        --template report/templates/lecture17.md.j2 \
        --config config/config.yaml --out-md report/lecture17.md --out-html report/lecture17.html

Everything in the report is computed from the aggregated tables; the lecture's values come from
the ledger. Nothing depends on the date, the path or the host, except the block marked
machine-dependent (timings, CPU), which a diff of two reports skips.
"""

import argparse
import base64
import hashlib
import re
import shutil
import sys
from pathlib import Path

import markdown
import yaml
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from lecture17 import ledger as ledger_mod
from lecture17.aggregate import read_tables
from lecture17.figures import caption as figure_caption
from lecture17.provenance import machine_info, reproducible_info

MACHINE_BEGIN = "<!-- machine-dependent:begin -->"
MACHINE_END = "<!-- machine-dependent:end -->"


# -----------------------------------------------------------------------------
# views: one aggregated table -> one Markdown table, as the lecture printed it


def load_views(folder: Path) -> dict:
    views = {}
    for path in sorted(Path(folder).glob("*.yaml")):
        with open(path, encoding="utf-8") as f:
            for demo, items in (yaml.safe_load(f) or {}).items():
                views.setdefault(str(demo), []).extend(items)
    return views


def cell(text) -> str:
    """A Markdown table cell: a `|` inside it would end the cell."""
    return str(text).replace("|", "\\|")


def fmt_cell(row, fmt: str) -> str:
    text = format(row["mean"], fmt)
    if row["n_seeds"] > 1:
        lo, hi = format(row["min"], fmt), format(row["max"], fmt)
        if lo != hi:  # a spread is only shown where the seeds disagree at the printed precision
            text += f" ({lo}–{hi})"
    return text


def _filter(table, view):
    rows = table
    if "quantities" in view:
        rows = rows[rows["quantity"].isin(view["quantities"])]
    for label, wanted in view.get("where", {}).items():
        wanted = wanted if isinstance(wanted, list) else [wanted]
        rows = rows[rows[label].isin([str(w) for w in wanted])]
    return rows


def render_view(table, view) -> str:
    rows = _filter(table, view)
    if rows.empty:
        raise ValueError(f"view {view.get('title')!r} selects no rows")
    index, columns = list(view.get("index", [])), list(view.get("columns", []))
    fmt = view.get("fmt", ".3g")
    keys = lambda cols: list(dict.fromkeys(tuple(r) for r in rows[cols].itertuples(index=False)))  # noqa: E731
    row_keys = keys(index) if index else [()]
    col_keys = keys(columns) if columns else [()]
    cells = {}
    for _, r in rows.iterrows():
        cell_fmt = fmt.get(r["quantity"], ".3g") if isinstance(fmt, dict) else fmt
        key = (tuple(r[c] for c in index), tuple(r[c] for c in columns))
        cells[key] = fmt_cell(r, cell_fmt)
    labels = view.get("labels", {})
    header = [" · ".join(labels.get(c, c) for c in index) or " "]
    header += [" · ".join(labels.get(v, v) for v in ck) or "值 value" for ck in col_keys]
    header = [cell(h) for h in header]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for rk in row_keys:
        line = [cell(" · ".join(labels.get(v, v) for v in rk))]
        line += [cells.get((rk, ck), "—") for ck in col_keys]
        lines.append("| " + " | ".join(line) + " |")
    return "\n".join(lines)


# -----------------------------------------------------------------------------
# the document


def machine_dependent(text: str) -> str:
    return f"{MACHINE_BEGIN}\n\n{text}\n\n{MACHINE_END}"


def claims_table(outcomes) -> str:
    lines = [
        "| 编号 id | § | 讲义的说法 claim | 讲义 lecture | 我们 ours | 结论 status | 说明 note |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        e = o.entry
        status = ledger_mod.STATUS[o.status] + (f"：{o.reason}" if o.reason else "")
        note = (f"[{e['flag']}] " if e.get("flag") else "") + e.get("note", "")
        row = [e["id"], e["section"], e["claim"], e["lecture"], o.ours or "—", status, note]
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return "\n".join(lines)


def timing_summary(outcomes) -> str:
    """The timing claims' statuses and the ones that do not hold on this machine."""
    timing = [o for o in outcomes if o.entry["class"] == "timing"]
    counts = "，".join(
        f"{ledger_mod.STATUS[s]} {sum(o.status == s for o in timing)}"
        for s in dict.fromkeys(o.status for o in timing)
    )
    lines = [f"计时 timing（{len(timing)} 个 claims）：{counts}。"]
    lines += [
        f"- {o.entry['id']}（{o.entry['section']}）{o.entry['claim']}：讲义 lecture "
        f"{o.entry['lecture']}，我们 ours {o.ours or '—'} — {o.reason}"
        for o in timing
        if o.status == "timing_fails"
    ]
    return "\n".join(lines)


class Report:
    """What the template can call: demo(id) renders a demo's tables, figures and claims."""

    def __init__(self, tables, views, outcomes, figures, recorded=()):
        self.tables, self.views, self.outcomes, self.figures = tables, views, outcomes, figures
        self.recorded = set(recorded)  # demos whose runs were recorded elsewhere (on a GPU)
        self.shown = set()

    def demo(self, demo_id: str, exercises: bool = False) -> str:
        """A demo's views, figures and claims; claims about exercises wait for §13 unless asked."""
        if demo_id not in self.views and demo_id not in self.tables:
            return f"*（本次构建没有演示 {demo_id} demo {demo_id} is not in this build）*"
        parts = []
        for view in self.views.get(demo_id, []):
            source = str(view.get("table", demo_id))
            parts.append(
                f"**{view['title']}**" + (f"（{view['note']}）" if view.get("note") else "")
            )
            if source in self.tables:
                table = render_view(self.tables[source], view)
                parts.append(machine_dependent(table) if view.get("machine_dependent") else table)
            else:
                parts.append(f"*（本次构建没有演示 {source} 的结果 not built）*")
        for name, path in self.figures.items():
            if name.split("_")[0] == demo_id:
                parts.append(f"![{name}](figures/{Path(path).name})\n\n*{figure_caption(name)}*")
        parts.append(self.claims(demo=demo_id, exercises=exercises))
        return "\n\n".join(p for p in parts if p)

    def claims(self, demo=None, section=None, exercises=True) -> str:
        chosen = [
            o
            for o in self.outcomes
            if o.entry["id"] not in self.shown
            and (demo is None or o.entry.get("demo") == demo)
            and (section is None or o.entry["section"].startswith(section))
            and (exercises or not o.entry["section"].startswith("Ex"))
        ]
        self.shown |= {o.entry["id"] for o in chosen}
        stable = [o for o in chosen if o.entry["class"] != "timing"]
        timing = [o for o in chosen if o.entry["class"] == "timing"]
        parts = [claims_table(stable)] if stable else []
        if timing:  # our timings change from run to run: keep them out of the diffable part
            parts.append(machine_dependent(claims_table(timing)))
        return "\n\n".join(parts)

    def remaining_claims(self) -> str:
        return self.claims()

    def has(self, demo_id: str) -> bool:
        """Whether this build has the demo's table (a GPU-only demo is absent from CPU builds)."""
        return demo_id in self.tables

    def is_recorded(self, demo_id: str) -> bool:
        """Whether the demo's table comes from runs recorded on a GPU, not rerun by this build."""
        return demo_id in self.recorded

    def crossover(self, demo_id: str) -> str:
        """Per model width: from which L on the Transformer's step beats the GRU's (06.3, §9.5)."""
        return crossover_lines(self.tables[demo_id])


def crossover_lines(table) -> str:
    """One bullet per d_model, from `ms_ratio_transformer_over_gru` (measured in one run).

    The crossover is the shortest L from which the Transformer is faster at that L and at every
    longer one measured; "never" and "from the shortest L on" are said as such.
    """
    rows = table[table["quantity"] == "ms_ratio_transformer_over_gru"]
    ms = table[table["quantity"] == "ms_per_step"]
    lines = []
    for d_model, group in rows.groupby(rows["d_model"].astype(int), sort=False):
        group = group.assign(L=group["seq_len"].astype(int)).sort_values("L")
        lengths, ratio = group["L"].tolist(), group["mean"].to_numpy()
        faster = ratio < 1  # the Transformer's step is the shorter one
        first = next((i for i in range(len(lengths)) if faster[i:].all()), None)
        longest = lengths[-1]
        at_longest = ms[
            (ms["d_model"].astype(int) == d_model) & (ms["seq_len"].astype(int) == longest)
        ]
        tf, gru = (
            float(at_longest.loc[at_longest["model"] == m, "mean"].iloc[0])
            for m in ("transformer", "gru")
        )
        head = f"- d_model {d_model}（{group['precision'].iloc[0]}）："
        tail = f"L = {longest}：Transformer {tf:.1f} ms，GRU {gru:.1f} ms。"
        if first is None:
            lines.append(
                head
                + f"L ≤ {longest} 时 GRU 每步都比 Transformer 快 the GRU is faster at every L；"
                + tail
            )
        elif first == 0:
            lines.append(
                head
                + f"从 L = {lengths[0]} 起 Transformer 每步都更快 "
                + "the Transformer is faster at every L；"
                + tail
            )
        else:
            lines.append(
                head
                + f"交叉点 crossover 在 L = {lengths[first - 1]} 和 {lengths[first]} 之间："
                + f"L ≥ {lengths[first]} 时 Transformer 每步更快；"
                + tail
            )
    return "\n".join(lines)


def render_markdown(template_path: Path, context: dict) -> str:
    env = Environment(
        loader=FileSystemLoader(template_path.parent),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template(template_path.name).render(**context)


HTML_HEAD = """<!DOCTYPE html>
<html lang="zh-CN"><head><meta charset="utf-8">
<title>Lecture 17 · Transformer Networks — 配套代码结果</title>
<style>
body {{ font-family: "Noto Sans CJK SC", "PingFang SC", sans-serif; max-width: 60em;
       margin: 2em auto; padding: 0 1em; line-height: 1.6; color: #222; }}
table {{ border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }}
th {{ background: #f3f3f3; }}
img {{ max-width: 100%; }}
code {{ background: #f6f6f6; padding: 0 0.2em; }}
</style></head><body>
{body}
</body></html>
"""


def to_html(md_text: str, figure_dir: Path) -> str:
    body = markdown.markdown(md_text, extensions=["tables", "fenced_code"], output_format="html")

    def embed(match):
        path = figure_dir / Path(match.group(1)).name
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f'src="data:image/png;base64,{data}"'

    body = re.sub(r'src="figures/([^"]+\.png)"', embed, body)
    return HTML_HEAD.format(body=body)


def build(args) -> tuple[str, str]:
    tables = read_tables(args.tables)  # each demo's timing table merged back in
    with open(args.config, encoding="utf-8") as f:
        demos = yaml.safe_load(f)["demos"]
    outcomes = ledger_mod.evaluate_all(ledger_mod.load_ledger(args.ledger), tables, demos)
    figures = {Path(p).stem: Path(p) for p in args.figures}
    report = Report(tables, load_views(args.views), outcomes, figures, args.recorded)
    context = {
        "r": report,
        "outcomes": outcomes,
        # timings change from run to run: their counts and failures stay in a machine block
        "summary": ledger_mod.summary([o for o in outcomes if o.entry["class"] != "timing"]),
        "machine_dependent_timing": machine_dependent(timing_summary(outcomes)),
        "counts": ledger_mod.reproduced(outcomes),
        "STATUS": ledger_mod.STATUS,
        "reproducible": reproducible_info(args.config, args.code),
        "machine": machine_info(args.benchmarks),
        "MACHINE_BEGIN": MACHINE_BEGIN,
        "MACHINE_END": MACHINE_END,
    }
    md_text = render_markdown(Path(args.template), context)
    return md_text, to_html(md_text, Path(args.out_md).parent / "figures")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m lecture17.report", description=__doc__.splitlines()[0]
    )
    p.add_argument("--tables", nargs="*", default=[])
    p.add_argument("--figures", nargs="*", default=[])
    p.add_argument("--ledger", type=Path, required=True)
    p.add_argument("--views", type=Path, required=True)
    p.add_argument("--template", type=Path, required=True)
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--benchmarks", type=Path, default=Path("benchmarks"))
    p.add_argument("--code", nargs="*", default=[], help="the source files the results came from")
    p.add_argument(
        "--recorded", nargs="*", default=[], help="demos whose runs were recorded on a GPU"
    )
    p.add_argument("--out-md", type=Path, required=True)
    p.add_argument("--out-html", type=Path, required=True)
    p.add_argument("--out-config", type=Path, help="a copy of the config, for `lecture17 diff`")
    args = p.parse_args(argv)
    md_text, html_text = build(args)
    for path, text in ((args.out_md, md_text), (args.out_html, html_text)):
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    if args.out_config:
        shutil.copyfile(args.config, args.out_config)
    digest = hashlib.sha256(md_text.encode()).hexdigest()[:12]
    print(f"报告 report → {args.out_md}, {args.out_html} (sha256 {digest})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
