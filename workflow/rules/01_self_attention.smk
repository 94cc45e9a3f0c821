# Lecture script 01: §1–§3 self-attention (analytic demos, no training).
# Demo functions: src/lecture17/experiments/self_attention.py; settings: config/config.yaml.


rule self_attention:
    input:
        code=code("lecture17.run", "lecture17.experiments.self_attention"),
    output:
        csv="results/{demo}/seed{seed}.csv",
        timing="results/{demo}/seed{seed}.timing.csv",
    log:
        "logs/{demo}/seed{seed}.log",
    benchmark:
        "benchmarks/self_attention/{demo}/seed{seed}.tsv"
    wildcard_constraints:
        demo=r"01\.\d",
    conda:
        "../../environment.yml"
    params:
        settings=settings_json,
    shell:
        "python -m lecture17.run {wildcards.demo} --seed {wildcards.seed} "
        "--settings {params.settings:q} --out {output.csv} 2> {log}"
