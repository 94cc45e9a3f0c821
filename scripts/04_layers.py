"""代码 04 · 编码器 / 解码器层 layers（§7–§8）: the lecture's script 04, without Snakemake.

    .venv/bin/python scripts/04_layers.py

Runs demos 04.1, 04.2, 04.3, 04.4, 04.5, 04.6 (experiments/layers.py) with the settings of
config/config.yaml, every seed and grid point, on the CPU, and prints their tables as the
report lays them out. Nothing is written; `snakemake` builds the same demos into results/.
"""

import sys

from lecture17.scripts import run_script

EDITS = {}  # no exercise edits this script's settings (config/config.yaml holds them)

if __name__ == "__main__":
    sys.exit(run_script("04"))
