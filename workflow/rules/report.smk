# Figures and the report: tables and figures in the lecture's order, lecture values beside ours.


rule figure:
    input:
        table=lambda w: f"results/tables/{FIGURES[w.name][0]}.csv",
        timing=lambda w: f"results/tables/{FIGURES[w.name][0]}.timing.csv",
        code=code("lecture17.figures"),
    output:
        report(
            "report/figures/{name}.png",
            caption="../report/figure.rst",
            category="图 Figures",
            labels={"图 figure": "{name}"},
        ),
    log:
        "logs/figures/{name}.log",
    benchmark:
        "benchmarks/figure/{name}.tsv"
    conda:
        "../../environment.yml"
    shell:
        "python -m lecture17.figures {wildcards.name} {input.table} --out {output} 2> {log}"


rule report:
    input:
        tables=expand("results/tables/{demo}.csv", demo=TABLES),
        timings=expand("results/tables/{demo}.timing.csv", demo=TABLES),
        figures=expand("report/figures/{name}.png", name=FIGURE_NAMES),
        ledger=sorted(str(p) for p in Path("report/ledger").glob("*.[py]*")),
        views=sorted(str(p) for p in Path("report/views").glob("*.yaml")),
        template="report/templates/lecture17.md.j2",
        config=os.path.relpath(workflow.configfiles[0]),
        code=ALL_CODE,
    output:
        md="report/lecture17.md",
        html="report/lecture17.html",
    log:
        "logs/report.log",
    benchmark:
        "benchmarks/report/report.tsv"
    conda:
        "../../environment.yml"
    params:
        recorded=" ".join(RECORDED),  # tables from runs recorded on a GPU (report/measured/)
    shell:
        "python -m lecture17.report --tables {input.tables} --figures {input.figures} "
        "--ledger report/ledger --views report/views --template {input.template} "
        "--config {input.config} --code {input.code} --recorded {params.recorded} "
        "--out-md {output.md} --out-html {output.html} 2> {log}"
