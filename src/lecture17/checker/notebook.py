"""A student's Jupyter notebook as a Python file the checker can load.

The code cells, in order, become one .py file (nbformat reads the notebook); IPython's
magics (`%…`, a `%%…` cell) and shell lines (`!…`) are not Python: each such line becomes
`pass` (its indentation kept) and is listed in a note, and a `%%` cell other than %%time,
%%timeit and %%capture is left out whole. Every line of the .py file maps back to its cell
and its line in that cell (child.NOTEBOOK_LINES), so a message says "cell 3, line 2".
"""

from pathlib import Path

KEPT_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")


def to_python(path: Path, out: Path) -> tuple[Path, list, list[str]]:
    """(the .py file written at `out`, [(cell, line)] per line of it, notes for the student).
    Raises ValueError (in words) when the file is not a notebook nbformat can read."""
    import nbformat

    try:
        nb = nbformat.read(str(path), as_version=4)
    except Exception as error:  # noqa: BLE001 - any unreadable notebook, said in one line
        raise ValueError(
            f"读不了这个 notebook（nbformat）：{type(error).__name__}: {error}"
        ) from None
    lines, where, notes = [], [], []
    for k, cell in enumerate(nb.cells, 1):
        if cell.cell_type != "code":
            continue
        source = cell.source.splitlines()
        first = source[0].strip() if source else ""
        if first.startswith("%%") and not first.startswith(KEPT_CELL_MAGICS):
            notes.append(f"cell {k}：{first.split()[0]} 的单元格不是 Python，跳过 skipped")
            continue
        depth, continued = 0, False  # inside brackets, or after a backslash: one statement
        for m, line in enumerate(source, 1):
            body = line.lstrip()
            if depth == 0 and not continued and body.startswith(("%", "!")):
                notes.append(f"cell {k}, line {m}：{body.strip()[:60]}（魔法命令 magic，跳过）")
                line = line[: len(line) - len(body)] + "pass"
            else:
                depth = _open_after(line, depth)
            continued = line.rstrip().endswith("\\")
            lines.append(line)
            where.append((k, m))
    out = Path(out)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out, where, notes


def _open_after(line: str, depth: int) -> int:
    """Open brackets after `line` (strings and comments skipped): a line that starts inside
    brackets is never a magic (`x = (a` then `% b)`)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote and (i == 0 or line[i - 1] != "\\"):
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            break
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
    return depth
