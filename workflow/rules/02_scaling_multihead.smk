# Lecture script 02: §4–§5 scaling and multi-head attention (analytic demos, no training).
# Demo functions: src/lecture17/experiments/scaling_multihead.py; settings: config/config.yaml.


rule scaling_multihead:
    input:
        code=code("lecture17.run", "lecture17.experiments.scaling_multihead"),
    output:
        csv="results/{demo}/seed{seed}.csv",
        timing="results/{demo}/seed{seed}.timing.csv",
    log:
        "logs/{demo}/seed{seed}.log",
    benchmark:
        "benchmarks/scaling_multihead/{demo}/seed{seed}.tsv"
    wildcard_constraints:
        demo=r"02\.\d",
    conda:
        "../../environment.yml"
    params:
        settings=settings_json,
    shell:
        "python -m lecture17.run {wildcards.demo} --seed {wildcards.seed} "
        "--settings {params.settings:q} --out {output.csv} 2> {log}"


rule lookup_task:
    # §4.4 the look-up task (training): one job per (setting, seed), each with its own CSV and log.
    input:
        code=code("lecture17.run", "lecture17.experiments.scaling_multihead"),
    output:
        csv="results/{demo}/{setting}/seed{seed}.csv",
        timing="results/{demo}/{setting}/seed{seed}.timing.csv",
    log:
        "logs/{demo}/{setting}/seed{seed}.log",
    benchmark:
        "benchmarks/lookup_task/{demo}/{setting}/seed{seed}.tsv"
    wildcard_constraints:
        demo=r"02\.3",
    conda:
        "../../environment.yml"
    resources:
        gpu=lambda w: int(config["device"] == "cuda"),
    params:
        settings=training_settings_json,
        grid=grid_json,
    shell:
        "python -m lecture17.run {wildcards.demo} --seed {wildcards.seed} "
        "--settings {params.settings:q} --grid {params.grid:q} --out {output.csv} 2> {log}"
