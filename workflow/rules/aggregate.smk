# The pandas step: one seed-averaged table per demo (mean and min–max over seeds), and its
# timings (machine-dependent) in a table of their own beside it.


rule aggregate:
    input:
        runs=lambda w: table_inputs(w.demo),
        timings=lambda w: [timing_path(p) for p in table_inputs(w.demo)],
        code=code("lecture17.pipeline.aggregate"),
    output:
        table=report(
            "results/tables/{demo}.csv",
            caption="../report/table.rst",
            category="表格 Tables",
            labels={"演示 demo": "{demo}"},
        ),
        timing="results/tables/{demo}.timing.csv",
    log:
        "logs/tables/{demo}.log",
    benchmark:
        "benchmarks/aggregate/{demo}.tsv"
    conda:
        "../../environment.yml"
    shell:
        "python -m lecture17.pipeline.warm lecture17.pipeline.aggregate {input.runs} {input.timings} --out {output.table} 2> {log}"
