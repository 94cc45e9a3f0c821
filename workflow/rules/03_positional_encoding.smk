# Lecture script 03: §6 positional encoding (analytic demos, no training).
# Demo functions: src/lecture17/experiments/positional_encoding.py; settings: config/config.yaml.


rule positional_encoding:
    input:
        code=code("lecture17.run", "lecture17.experiments.positional_encoding"),
    output:
        csv="results/{demo}/seed{seed}.csv",
        timing="results/{demo}/seed{seed}.timing.csv",
    log:
        "logs/{demo}/seed{seed}.log",
    benchmark:
        "benchmarks/positional_encoding/{demo}/seed{seed}.tsv"
    wildcard_constraints:
        demo=r"03\.\d",
    conda:
        "../../environment.yml"
    params:
        settings=settings_json,
    shell:
        "python -m lecture17.run {wildcards.demo} --seed {wildcards.seed} "
        "--settings {params.settings:q} --out {output.csv} 2> {log}"


rule pe_ablation:
    # §6.6 positional-encoding ablation (training): one job per (setting, seed), each with its own CSV and log.
    input:
        code=code("lecture17.run", "lecture17.experiments.positional_encoding"),
    output:
        csv="results/{demo}/{setting}/seed{seed}.csv",
        timing="results/{demo}/{setting}/seed{seed}.timing.csv",
    log:
        "logs/{demo}/{setting}/seed{seed}.log",
    benchmark:
        "benchmarks/pe_ablation/{demo}/{setting}/seed{seed}.tsv"
    wildcard_constraints:
        demo=r"03\.5",
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
