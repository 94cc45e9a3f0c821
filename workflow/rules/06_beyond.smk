# Script 06, beyond the lecture: its "at scale" claims made concrete (§8.4 KV cache, §10.4).
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
