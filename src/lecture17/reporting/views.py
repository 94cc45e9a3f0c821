"""Views: one aggregated table -> one table as the lecture printed it (report/views/*.yaml),
with the lecture's values beside ours; and the one function that writes a Markdown table.

A view (docs/ARCHITECTURE.md) names a demo's quantities, the labels that index its rows and
columns, the format the lecture prints them in, and the words for each label. The report
(reporting.report) places views in the template; `python -m lecture17 show` prints them in
the terminal; diff reads their formats.
"""

import re
import unicodedata
from pathlib import Path

from lecture17.pipeline import yamlio
from lecture17.pipeline.aggregate import STAT_COLUMNS, select
from lecture17.reporting import ledger as ledger_mod
from lecture17.reporting import notice

STATS = STAT_COLUMNS  # the columns that are not labels


def markdown_table(header: list, rows: list[list]) -> str:
    """The one place a Markdown table is written: the header, its rule, one line per row; a
    `|` inside a cell is escaped (it would end the cell)."""
    lines = [header, *rows]
    text = ["| " + " | ".join(cell(c) for c in line) + " |" for line in lines]
    return "\n".join([text[0], "|" + "---|" * len(header), *text[1:]])


def load_views(folder: Path) -> dict:
    views = {}
    for path in sorted(Path(folder).glob("*.yaml")):
        with open(path, encoding="utf-8") as f:
            for demo, items in (yamlio.load(f) or {}).items():
                for view in items:
                    if "notice" in view:  # a wrong name fails here, not mid-render
                        notice.validate(view["notice"], f"{path.name}: {demo} {view['title']}")
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
    return select(table, view.get("quantities"), **view.get("where", {}))


def row_key(table, r) -> tuple:
    """A row's labels, quantity included: the key the ledger's Outcome.cells uses."""
    return tuple(r[c] for c in table.columns if c not in ("demo", *STATS))


NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def _column_label(column: str, value, labels: dict, levels: int) -> str:
    """One level of a column's header: its label; a bare number among several levels names its
    setting ("d_k = 16 · 最快步数", not "16 · 最快步数")."""
    if value in labels:
        return labels[value]
    if levels > 1 and NUMBER.fullmatch(str(value)):  # the tables' labels are strings
        return f"{labels.get(column, column)} = {value}"
    return str(value)


def column_header(columns: list, key: tuple, labels: dict) -> str:
    pairs = zip(columns, key, strict=True)
    return " · ".join(_column_label(c, v, labels, len(key)) for c, v in pairs) or "值 value"


def view_grid(table, view, lecture=None, html=False) -> dict:
    """A view as {corner, columns, rows: [(label, [cells])]}; `lecture` maps row keys to the
    lecture's value, printed beside ours in that cell."""
    rows = _filter(table, view)
    if rows.empty:
        raise ValueError(f"view {view.get('title')!r} selects no rows")
    index, columns = list(view.get("index", [])), list(view.get("columns", []))
    fmt = view.get("fmt", ".3g")
    keys = lambda cols: list(dict.fromkeys(tuple(r) for r in rows[cols].itertuples(index=False)))  # noqa: E731
    row_keys = keys(index) if index else [()]
    col_keys = keys(columns) if columns else [()]
    if "quantity" in columns and view.get("quantities"):  # the view's order of quantities
        at, order = columns.index("quantity"), list(view["quantities"])
        col_keys.sort(key=lambda k: order.index(k[at]) if k[at] in order else len(order))
    cells = {}
    for _, r in rows.iterrows():
        cell_fmt = fmt.get(r["quantity"], ".3g") if isinstance(fmt, dict) else fmt
        key = (tuple(r[c] for c in index), tuple(r[c] for c in columns))
        text = fmt_cell(r, cell_fmt)
        quoted = (lecture or {}).get(row_key(table, r))
        cells[key] = beside_lecture(text, quoted, html) if quoted else text
    labels = view.get("labels", {})
    return {
        "keys": col_keys,
        "by_quantity": index == ["quantity"],  # the row labels name what each row is
        "corner": " · ".join(labels.get(c, c) for c in index) or " ",
        "columns": [column_header(columns, ck, labels) for ck in col_keys],
        "rows": [
            (
                " · ".join(labels.get(v, v) for v in rk),
                [cells.get((rk, ck), "—") for ck in col_keys],
            )
            for rk in row_keys
        ],
    }


def display_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def as_text(table: str) -> str:
    """A Markdown table, aligned for a terminal (CJK characters are two columns wide)."""
    rows = [  # a cell's own `|` is escaped (markdown_table): split on the others only
        [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
        for line in table.splitlines()
    ]
    rows = [rows[0]] + rows[2:]
    widths = [max(display_width(r[i]) for r in rows) for i in range(len(rows[0]))]
    pad = lambda cell, w: cell + " " * (w - display_width(cell))  # noqa: E731
    lines = ["  ".join(pad(c, w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def grid_table(grid: dict) -> str:
    """A view_grid as a Markdown table."""
    rows = [[label, *cells] for label, cells in grid["rows"]]
    return markdown_table([grid["corner"], *grid["columns"]], rows)


def render_view(table, view) -> str:
    return grid_table(view_grid(table, view))


def _same_number(ours: str, lecture: str) -> bool:
    """Ours (its mean, before any "(min–max)") prints the lecture's number: 0.614 = 0.614,
    2.0 = 2 (the lecture dropped the zero), 76% = 76%, 1,050,624 = 1,050,624, and 0.3046 =
    0.305 (ours rounded to the lecture's decimals, where we print more of them)."""

    def plain(text: str) -> str:
        return text.split(" (")[0].replace(" ", "").replace("−", "-").replace(",", "")

    def number(text: str) -> float:
        return float(text[:-1]) / 100 if text.endswith("%") else float(text)

    def decimals(text: str) -> int | None:
        found = re.fullmatch(r"-?\d+\.(\d+)", text)
        return len(found.group(1)) if found else None

    a, b = plain(ours), plain(lecture)
    try:
        if number(a) == number(b):
            return True
        fewer = decimals(b)
        return (
            fewer is not None
            and (decimals(a) or 0) > fewer
            and (f"{number(a):.{fewer}f}" == f"{number(b):.{fewer}f}")
        )
    except ValueError:
        return False


def beside_lecture(ours: str, lecture: str, html: bool) -> str:
    """A cell the lecture quotes: ours, then the lecture's value (or "= 讲义" where equal)."""
    quoted = "= 讲义" if _same_number(ours, lecture) else f"讲义 {lecture}"
    return f'{ours}<span class="lec">{quoted}</span>' if html else f"{ours}（{quoted}）"


def fold(grid: dict, foldable=()) -> tuple[dict | None, list[str]]:
    """A one-row table becomes a line; a column the view marks `fold` (a setting such as the
    number of learning rates swept) becomes a fact where it has one value in every row."""
    if len(grid["rows"]) == 1:
        (label, cells), corner = grid["rows"][0], grid["corner"].strip()
        head = f"{corner} = {label}" if corner and label and not grid.get("by_quantity") else label
        if grid["columns"] == ["值 value"]:
            return None, [f"{head}：{cells[0]}" if head else cells[0]]
        pairs = [f"{c}：{v}" for c, v in zip(grid["columns"], cells, strict=True)]
        return None, ([head] if head else []) + pairs
    constant = [
        j
        for j, key in enumerate(grid["keys"])
        if set(map(str, key)) & set(map(str, foldable))
        and len({cells[j] for _, cells in grid["rows"]}) == 1
    ]
    if not constant or len(constant) == len(grid["columns"]):
        return grid, []
    value = grid["rows"][0][1]
    facts = [f"{grid['columns'][j]}：{value[j]}（每行相同 in every row）" for j in constant]
    keep = [j for j in range(len(grid["columns"])) if j not in constant]
    return {
        **grid,
        "keys": [grid["keys"][j] for j in keep],
        "columns": [grid["columns"][j] for j in keep],
        "rows": [(label, [cells[j] for j in keep]) for label, cells in grid["rows"]],
    }, facts


# -----------------------------------------------------------------------------
# the lecture's values in our tables: the cells a claim reads, one lecture number each

NUMBER = re.compile(r"[−-]?\d[\d,]*(\.\d+)?([eE][−+-]?\d+)?%?")


def lecture_numbers(text: str) -> list[str] | None:
    """ "(0.117, 0.648)" -> ["0.117", "0.648"], "L = 16：0.945 vs 0.937" -> ["0.945", "0.937"];
    None unless every item is a plain number."""
    text = str(text).rpartition("：")[2].strip().strip("()")
    items = re.split(r",\s+|\s+vs\s+|\s+/\s+|\s*和\s*", text)
    return items if all(NUMBER.fullmatch(i) for i in items) else None


def lecture_cells(outcomes, tables) -> dict:
    """{(demo, row key): the lecture's number} for claims whose shown values are table rows of
    seed means, one lecture number each (a claim about the lowest seed is not the cell's mean)."""
    found = {}
    for o in outcomes:
        e = o.entry
        if o.status in ("cited", "missing", "gpu") or e["class"] in ("cited", "timing"):
            continue
        if "value" not in e and "values" not in e:
            continue
        selectors = ledger_mod._selectors(e)
        shown = [selectors[n] for n in ledger_mod._show_names(e) or [next(iter(selectors))]]
        numbers = lecture_numbers(e["lecture"])
        if numbers is None or any(s.get("stat", "mean") != "mean" or "reduce" in s for s in shown):
            continue
        rows = [
            (str(s.get("demo", e.get("demo"))), row_key(picked, r))
            for s in shown
            for picked in [ledger_mod.select(tables, s, e.get("demo"))]
            for _, r in picked.iterrows()
        ]
        if len(numbers) == 1 and ledger_mod.steps_of(e) == [{"digits": {"each": True}}]:
            numbers = numbers * len(rows)  # "each prints 0.797"
        if len(rows) == len(numbers):
            for cell_key, number in zip(rows, numbers, strict=True):
                found.setdefault(cell_key, number)
    return found


def crossovers(table) -> list[dict]:
    """06.3 (§9.5), per d_model, from `ms_ratio_transformer_over_gru` (measured in one run):
    `faster_from`, the shortest L from which the Transformer is faster at that L and at every
    longer one measured (None: never), `slower_at`, the L just before it (None when it is the
    shortest), and the two ms per step at the longest L. The template's `crossover` macro
    words each."""
    rows = select(table, "ms_ratio_transformer_over_gru")
    ms = select(table, "ms_per_step")
    found = []
    for d_model, group in rows.groupby(rows["d_model"].astype(int), sort=False):
        group = group.assign(L=group["seq_len"].astype(int)).sort_values("L")
        lengths, ratio = group["L"].tolist(), group["mean"].to_numpy()
        faster = ratio < 1  # the Transformer's step is the shorter one
        first = next((i for i in range(len(lengths)) if faster[i:].all()), None)
        longest = lengths[-1]
        at_longest = ms[
            (ms["d_model"].astype(int) == d_model) & (ms["seq_len"].astype(int) == longest)
        ]
        tf_ms, gru_ms = (
            float(at_longest.loc[at_longest["model"] == m, "mean"].iloc[0])
            for m in ("transformer", "gru")
        )
        found.append(
            {
                "d_model": d_model,
                "precision": group["precision"].iloc[0],
                "faster_from": None if first is None else lengths[first],
                "slower_at": lengths[first - 1] if first else None,
                "shortest": lengths[0],
                "longest": longest,
                "tf_ms": tf_ms,
                "gru_ms": gru_ms,
            }
        )
    return found
