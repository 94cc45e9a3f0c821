"""Writing result CSVs: exact floats, fixed line endings, and never half a file."""

import os
from pathlib import Path

import pandas as pd

FLOAT_FORMAT = (
    "%.17g"  # round-trips every float64 exactly: the CSV is the result, not a rounding of it
)


def write_csv(table: pd.DataFrame, out: Path) -> None:
    """Write to a temporary file and rename, so a failed job leaves nothing half-written."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    table.to_csv(tmp, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
    os.replace(tmp, out)
