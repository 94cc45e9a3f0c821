"""Write environment.yml (for conda users) with exactly the pins of requirements.txt."""

import sys

HEADER = """\
# Generated from requirements.txt by `make environment.yml`; do not edit by hand.
# conda env create -f environment.yml && conda activate lecture17 && pip install --no-deps -e .
name: lecture17
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - pip:
"""

pins = [line.strip() for line in open(sys.argv[1]) if line.strip() and not line.startswith("#")]
sys.stdout.write(HEADER + "".join(f"      - {pin}\n" for pin in pins))
