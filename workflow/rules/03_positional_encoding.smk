# Lecture script 03: §6 positional encoding (analytic demos, no training).
# Demo functions: src/lecture17/experiments/positional_encoding.py; settings: config/config.yaml.


rule positional_encoding:
    input:
        code=code("lecture17.run", "lecture17.experiments.positional_encoding"),
    output:
        "results/{demo}/seed{seed}.csv",
    log:
        "logs/{demo}/seed{seed}.log",
    benchmark:
        "benchmarks/positional_encoding/{demo}/seed{seed}.tsv"
    wildcard_constraints:
        demo=r"03\.\d",
    params:
        settings=settings_json,
    shell:
        "python -m lecture17.run {wildcards.demo} --seed {wildcards.seed} "
        "--settings {params.settings:q} --out {output} 2> {log}"
