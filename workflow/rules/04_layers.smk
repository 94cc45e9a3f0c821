# Lecture script 04: §7–§8 encoder and decoder layers (analytic demos, no training).
# Demo functions: src/lecture17/experiments/layers.py; settings: config/config.yaml.


rule layers:
    input:
        code=code("lecture17.run", "lecture17.experiments.layers"),
    output:
        "results/{demo}/seed{seed}.csv",
    log:
        "logs/{demo}/seed{seed}.log",
    benchmark:
        "benchmarks/layers/{demo}/seed{seed}.tsv"
    wildcard_constraints:
        demo=r"04\.\d",
    params:
        settings=settings_json,
    shell:
        "python -m lecture17.run {wildcards.demo} --seed {wildcards.seed} "
        "--settings {params.settings:q} --out {output} 2> {log}"
