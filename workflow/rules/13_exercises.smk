# §13 exercises: their numeric answers, computed (no training).
# Demo functions: src/lecture17/experiments/exercises.py; settings: config/config.yaml.


rule exercises:
    input:
        code=code("lecture17.run", "lecture17.experiments.exercises"),
    output:
        csv="results/{demo}/seed{seed}.csv",
        timing="results/{demo}/seed{seed}.timing.csv",
    log:
        "logs/{demo}/seed{seed}.log",
    benchmark:
        "benchmarks/exercises/{demo}/seed{seed}.tsv"
    wildcard_constraints:
        demo=r"13\.\d",
    conda:
        "../../environment.yml"
    params:
        settings=settings_json,
    shell:
        "python -m lecture17.run {wildcards.demo} --seed {wildcards.seed} "
        "--settings {params.settings:q} --out {output.csv} 2> {log}"
