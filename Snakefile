# Lecture 17 · Transformer Networks — the whole companion, from settings to report.
#
#   snakemake --cores 1            build everything (report/lecture17.md and .html)
#   snakemake -n                   what would run, and why
#   snakemake --list-changes params|code|input
#
# Layout: config/config.yaml (settings, with § references) → workflow/rules/*.smk (one file per
# lecture script, plus aggregation and report) → src/lecture17/ (the code) → results/ → report/.

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/01_self_attention.smk"
include: "workflow/rules/02_scaling_multihead.smk"
include: "workflow/rules/03_positional_encoding.smk"
include: "workflow/rules/04_layers.smk"
include: "workflow/rules/05_transformer_vs_rnn.smk"
include: "workflow/rules/06_beyond.smk"
include: "workflow/rules/13_exercises.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        "report/lecture17.md",
        "report/lecture17.html",
