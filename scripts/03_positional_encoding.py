"""代码 03 · 位置编码 positional encoding（§6）: the lecture's script 03, without Snakemake.

    .venv/bin/python scripts/03_positional_encoding.py

Runs demos 03.1, 03.2, 03.3, 03.4, 03.5 (experiments/positional_encoding.py) with the settings of
config/config.yaml, every seed and grid point, on the CPU, and prints their tables as the
report lays them out. Nothing is written; `snakemake` builds the same demos into results/.
"""

import sys

from lecture17.scripts import run_script

# Exercise 9 (§13): "把默认的 scale=True 改成 False … 看演示 5 的第一行". Either edit the
# default as the lecture says (MultiHeadAttention in src/lecture17/tiny_transformer.py: 03.5's
# config leaves its scale to that default) or set SCALE = False here; then run this script and
# read the first row of demo 5's table. None keeps the config's; `snakemake` reads both edits.
# (Recorded: demo 08.2.)
SCALE = None  # 03.5's MultiHeadAttention scale; config: null (the default). Exercise 9: False

EDITS = {"03.5": {"settings.scale": SCALE}}

if __name__ == "__main__":
    sys.exit(run_script("03"))
