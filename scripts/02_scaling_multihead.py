"""代码 02 · 缩放与多头 scaling, multi-head（§4–§5）: the lecture's script 02, without Snakemake.

    .venv/bin/python scripts/02_scaling_multihead.py

Runs demos 02.1, 02.2, 02.3, 02.4, 02.5 (experiments/scaling_multihead.py) with the settings of
config/config.yaml, every seed and grid point, on the CPU, and prints their tables as the
report lays them out. Nothing is written; `snakemake` builds the same demos into results/.
"""

import sys

from lecture17.scripts import run_script

EDITS = {}  # no exercise edits this script's settings (config/config.yaml holds them)

if __name__ == "__main__":
    sys.exit(run_script("02"))
