# Script 06, beyond the lecture: its "at scale" claims made concrete (§8.4 KV cache, §9.5 on a
# GPU, §10.4).
# Demo functions: src/lecture17/experiments/beyond.py; settings: config/config.yaml.


rule beyond:
    input:
        code=code("lecture17.run", "lecture17.experiments.beyond"),
    output:
        csv="results/{demo}/seed{seed}.csv",
        timing="results/{demo}/seed{seed}.timing.csv",
    log:
        "logs/{demo}/seed{seed}.log",
    benchmark:
        "benchmarks/beyond/{demo}/seed{seed}.tsv"
    wildcard_constraints:
        demo=r"06\.\d",
    conda:
        "../../environment.yml"
    params:
        settings=settings_json,
    shell:
        "python -m lecture17.run {wildcards.demo} --seed {wildcards.seed} "
        "--settings {params.settings:q} --out {output.csv} 2> {log}"


rule gpu_step_time:
    # §9.5 on a GPU (06.3): one job per model size, timing every model at every L; only in a
    # `device=cuda` build (its `devices`). Each job asks for the whole GPU (gpu=1), so two
    # never share one: run with `--resources gpu=1`, or on SLURM, which gives each its own.
    input:
        code=code("lecture17.run", "lecture17.experiments.beyond"),
    output:
        csv="results/{demo}/{setting}/seed{seed}.csv",
        timing="results/{demo}/{setting}/seed{seed}.timing.csv",
    log:
        "logs/{demo}/{setting}/seed{seed}.log",
    benchmark:
        "benchmarks/gpu_step_time/{demo}/{setting}/seed{seed}.tsv"
    wildcard_constraints:
        demo=r"06\.\d",
    conda:
        "../../environment.yml"
    resources:
        gpu=lambda w: int(config["device"] == "cuda"),
        mem_mb=16000,
        runtime=30,
    params:
        settings=training_settings_json,
        grid=grid_json,
    shell:
        "python -m lecture17.run {wildcards.demo} --seed {wildcards.seed} "
        "--settings {params.settings:q} --grid {params.grid:q} --out {output.csv} 2> {log}"
