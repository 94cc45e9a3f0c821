# The pandas step: one seed-averaged table per demo (mean and min–max over seeds).


rule aggregate:
    input:
        runs=lambda w: run_csvs(w.demo),
        code=code("lecture17.aggregate"),
    output:
        report(
            "results/tables/{demo}.csv",
            caption="../report/table.rst",
            category="表格 Tables",
            labels={"演示 demo": "{demo}"},
        ),
    log:
        "logs/tables/{demo}.log",
    benchmark:
        "benchmarks/aggregate/{demo}.tsv"
    conda:
        "../../environment.yml"
    shell:
        "python -m lecture17.aggregate {input.runs} --out {output} 2> {log}"
