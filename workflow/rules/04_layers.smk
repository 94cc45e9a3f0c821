# Lecture script 04: §7–§8 encoder and decoder layers (analytic demos, no training).
# Demo functions: src/lecture17/experiments/layers.py; settings: config/config.yaml.


rule layers:
    input:
        code=code("lecture17.run", "lecture17.experiments.layers"),
    output:
        csv="results/{demo}/seed{seed}.csv",
        timing="results/{demo}/seed{seed}.timing.csv",
    log:
        "logs/{demo}/seed{seed}.log",
    benchmark:
        "benchmarks/layers/{demo}/seed{seed}.tsv"
    wildcard_constraints:
        demo=r"04\.\d",
    conda:
        "../../environment.yml"
    params:
        settings=settings_json,
    shell:
        "python -m lecture17.run {wildcards.demo} --seed {wildcards.seed} "
        "--settings {params.settings:q} --out {output.csv} 2> {log}"


rule post_vs_pre_ln:
    # §7.5 Post-LN vs Pre-LN (training): one job per (setting, seed), each with its own CSV and log.
    input:
        code=code("lecture17.run", "lecture17.experiments.layers"),
    output:
        csv="results/{demo}/{setting}/seed{seed}.csv",
        timing="results/{demo}/{setting}/seed{seed}.timing.csv",
    log:
        "logs/{demo}/{setting}/seed{seed}.log",
    benchmark:
        "benchmarks/post_vs_pre_ln/{demo}/{setting}/seed{seed}.tsv"
    wildcard_constraints:
        demo=r"04\.3",
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
