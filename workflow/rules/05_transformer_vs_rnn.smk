# Lecture script 05: §9 a tiny Transformer vs GRU seq2seq (training).
# Demo functions: src/lecture17/experiments/transformer_vs_rnn.py; settings: config/config.yaml.
# 05.2 (accuracy by output position) is read from the 05.1 runs: see report/views/05.yaml.


rule transformer_vs_rnn:
    # §9 tiny Transformer vs GRU seq2seq: one job per (setting, seed), each with its own CSV and log.
    input:
        code=code("lecture17.run", "lecture17.experiments.transformer_vs_rnn"),
    output:
        csv="results/{demo}/{setting}/seed{seed}.csv",
        timing="results/{demo}/{setting}/seed{seed}.timing.csv",
    log:
        "logs/{demo}/{setting}/seed{seed}.log",
    benchmark:
        "benchmarks/transformer_vs_rnn/{demo}/{setting}/seed{seed}.tsv"
    wildcard_constraints:
        demo=r"05\.\d",
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
