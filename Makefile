# Two commands (README): `make report` builds everything, `make test` runs the tests.
# Both set up .venv from the pinned requirements first (once; again when the pins change).

VENV := .venv
# every core unless told otherwise (CORES=1: the same CSVs, byte for byte, only slower)
CORES ?= $(shell nproc 2>/dev/null || echo 1)
export PATH := $(abspath $(VENV))/bin:$(PATH)
# torch.set_num_threads(1) does not reach numpy's BLAS: one thread for every process we start.
export OMP_NUM_THREADS := 1
export OPENBLAS_NUM_THREADS := 1
export MKL_NUM_THREADS := 1

.PHONY: setup report robustness test test-python lint reference readme check check-catalogue grade-bench check-trained stop-test mutants mutants-coverage slurm-profile slurm-test screenshots browser-test clean
.DEFAULT_GOAL := report

$(VENV)/.installed: requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

setup: $(VENV)/.installed

report: setup
	snakemake --cores $(CORES) --show-failed-logs
	@echo "报告 report: $(CURDIR)/report/lecture17.md  ·  $(CURDIR)/report/lecture17.html"

# The recorded runs (07.x robustness seeds and readings, 08.x the exercises' runs): run and
# recorded under report/measured/ with their settings and code hashes (commit them); `make
# report` then shows them without rerunning. About 95 minutes on 2 cores here (README).
robustness: setup
	snakemake robustness --cores $(CORES)

# Two pytest workers, each test file on one (`--dist loadfile`: a file's module fixtures, such as
# the workflow tests' build, are made once): 13.6 vs 18.8 minutes on 2 cores (README).
test: setup
	pytest -n 2 --dist loadfile

# The torch-free part of the suite under another Python (requires-python admits 3.11-3.13):
# the pins without torch (PyPI has no CPU build of torch 2.13.0 for it, only several GB of CUDA
# wheels) in .venv-<version>. CI runs it for 3.12 and 3.13. Example: make test-python PY=3.13
PY ?= 3.12
PY_BIN ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/$(PY).*/bin/python$(PY)) $(shell command -v python$(PY)))
TORCH_FREE_TESTS := tests/pipeline/test_csvio.py tests/pipeline/test_profiles.py tests/reporting/test_diff.py tests/reporting/test_changelog.py tests/test_self_contained.py
.venv-$(PY)/.installed: requirements.txt pyproject.toml
	@test -n "$(PY_BIN)" || { echo "没有 Python $(PY) no python$(PY) found (pyenv or PATH)"; exit 1; }
	$(PY_BIN) -m venv .venv-$(PY)
	grep -v '^torch==' requirements.txt > .venv-$(PY)/requirements.txt
	.venv-$(PY)/bin/pip install --quiet --disable-pip-version-check -r .venv-$(PY)/requirements.txt
	.venv-$(PY)/bin/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

test-python: .venv-$(PY)/.installed
	.venv-$(PY)/bin/python -m pytest -p no:cacheprovider -n 2 $(TORCH_FREE_TESTS)

lint: setup
	ruff check src tests bench workflow/scripts report/ledger mutants
	ruff format --check src tests bench workflow/scripts report/ledger mutants
	snakefmt --check Snakefile workflow
	snakemake --lint

# Check a student's own numpy blocks against the lecture (README, "Check your own code"):
# make check FILE=my_blocks.py   (python -m lecture17 check --template my_blocks.py to start)
FILE ?=
check: setup
	@test -n "$(FILE)" || { echo "用法 usage: make check FILE=my_blocks.py"; exit 2; }
	python -m lecture17 check $(FILE)

# The checker's campaign (not in CI, which runs a sample): every catalogued mistake of the
# student-facing blocks checked as a student's file (mutants/fingerprints.csv, the names
# `check` gives), then every test of the checker over all of them and over the mistakes
# outside the catalogue (tests/checker_files/other_mistakes.py). About 15 minutes on 2 cores.
check-catalogue: setup
	PYTHONPATH=src:. python -m mutants.fingerprints
	CHECK_ALL=1 pytest -n 2 tests/test_checker.py

# A teacher's budget: `check --grade` on a class of 30 files (bench/README.md), ≤ 4 minutes
grade-bench: setup
	python bench/grade_class.py

# `check --trained` end to end on three torch files (a correct one, two slips), its time
# against the estimate it prints (bench/README.md); builds the mutants' control if missing
check-trained: setup
	PYTHONPATH=src:. python bench/check_trained.py

# A build told to stop stops (pipeline/stopping.py): 16 stops of a real build, SIGTERM and
# SIGINT at 8 moments of its scheduling, each within the bound (CI runs 3 of them).
stop-test: setup
	STOP_ALL=1 pytest -n 2 tests/pipeline/test_stop.py

# Mutation testing (not part of CI; mutants/README.md): each mutant of mutants/catalogue.py in a
# copy of the repository, rebuilt on the reduced protocol (mutants/protocol.yaml) against a
# cached control build, judged by `diff` and the counted verdicts, then the mutated module's
# tests; a second control under a simulated other CPU gives the false-catch rate. Results:
# mutants/results.csv, the tables in README.md and the report's appendix. MUTANT_JOBS mutants
# at a time, each with MUTANT_CORES / MUTANT_JOBS cores. What it costs (the controls, the
# mutants) is measured in README.md. One mutant: make mutants MUTANTS=warmup_never_caps
MUTANTS ?=
MUTANT_CORES ?= $(CORES)
MUTANT_JOBS ?= 2
mutants: setup
	PYTHONPATH=src nice -n 19 python -m mutants.run --cores $(MUTANT_CORES) --jobs $(MUTANT_JOBS) --false-catch $(MUTANTS)
	PYTHONPATH=src python -m mutants.table

# The mutants that the protocol's demos catch but whose flips of the claims decided on recorded
# seeds are part of the coverage (mutants/README.md): their recorded demos rebuilt as well
# (--recorded always). Run after `make mutants`, whose rows for them it replaces (~35 min).
COVERAGE_MUTANTS ?= fused_scale_flag_inverted decoder_not_causal gru_softmax_over_targets teacher_forcing_unshifted
mutants-coverage: setup
	PYTHONPATH=src nice -n 19 python -m mutants.run --cores $(MUTANT_CORES) --jobs $(MUTANT_JOBS) --recorded always $(COVERAGE_MUTANTS)
	PYTHONPATH=src python -m mutants.table

# The committed reference build (report/reference/) and the README's "关于实验结果" come from
# one full build; regenerate them with this command, never by hand.
reference: report
	python -m lecture17 reference

# The README's demo map, from the demo registry alone (seconds; `make reference` writes it too).
readme: setup
	python -m lecture17 readme

# The SLURM profile's per-rule memory and runtime come from a full build's benchmark files.
# (LECTURE17_WARM=0: a warm-started job's benchmark sees only its client, lecture17/pipeline/warm.py)
slurm-profile: setup
	LECTURE17_WARM=0 snakemake --cores $(CORES) --forceall --show-failed-logs
	python workflow/scripts/make_slurm_profile.py benchmarks > workflow/profiles/slurm/config.yaml

# The workflow on a one-node SLURM cluster on this machine (root, Debian), torn down after.
slurm-test: setup
	LECTURE17_REQUIRE_SLURM=1 pytest -rs tests/pipeline/test_slurm.py

# The HTML report as a reader sees it, at 390 px and 1280 px (needs Debian's chromium and
# fonts-noto-cjk; Playwright drives the system browser and downloads none).
screenshots: report
	bash workflow/scripts/screenshot_report.sh report/lecture17.html report/screenshots

# The page checked in headless Chromium (also part of `make test`; skips without chromium).
browser-test: setup
	LECTURE17_REQUIRE_BROWSER=1 pytest -rs tests/reporting/test_browser.py

# environment.yml is generated from requirements.txt (a test checks they agree).
environment.yml: requirements.txt
	python3 workflow/scripts/make_environment.py requirements.txt > $@

clean:
	rm -rf results/* logs benchmarks report/lecture17.md report/lecture17.html report/figures .snakemake
