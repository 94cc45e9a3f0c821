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
        starts = statement_starts(source)
        for m, line in enumerate(source, 1):
            body = line.lstrip()
            if m in starts and body.startswith(("%", "!")):
                notes.append(f"cell {k}, line {m}：{body.strip()[:60]}（魔法命令 magic，跳过）")
                line = line[: len(line) - len(body)] + "pass"
            lines.append(line)
            where.append((k, m))
    out = Path(out)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out, where, notes


def statement_starts(source: list[str]) -> set[int]:
    """The lines (1-based) of a cell where a statement starts: not inside brackets, a string
    (a docstring's lines included) or a backslash continuation. Python's tokenizer reads the
    cell as it is (`%` is an operator to it, `!` an error token it passes over); a cell it
    cannot read falls back to every line."""
    import io
    import tokenize

    skip = (tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT, tokenize.ENCODING)
    starts, depth, fresh = set(), 0, True
    try:
        for tok in tokenize.generate_tokens(io.StringIO("\n".join(source) + "\n").readline):
            if tok.type in (tokenize.NEWLINE, tokenize.NL):
                fresh = fresh or depth == 0 and tok.type == tokenize.NEWLINE
                fresh = fresh or depth == 0 and tok.type == tokenize.NL
                continue
            if tok.type in skip or tok.type == tokenize.ENDMARKER:
                continue
            if fresh:
                starts.add(tok.start[0])
                fresh = False
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth = max(0, depth - 1)
    except (tokenize.TokenError, SyntaxError):
        return set(range(1, len(source) + 1))
    return starts
