# Lecture 17 · Transformer Networks — the whole companion, from settings to report.
#
#   snakemake --cores 1            build everything (report/lecture17.md and .html)
#   snakemake -n                   what would run, and why
#   snakemake --list-changes params|code|input
#
# Layout: config/config.yaml (settings, with § references) → workflow/rules/*.smk (the experiment
# rules, derived from the demo registry; aggregation; figures and report) → src/lecture17/ (the
# code) → results/ → report/. docs/ARCHITECTURE.md has the picture.

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        "report/lecture17.md",
        "report/lecture17.html",
