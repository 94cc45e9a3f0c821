# Figures and the report: tables and figures in the lecture's order, lecture values beside ours.


rule figure:
    input:
        table=lambda w: f"results/tables/{FIGURES[w.name].table}.csv",
        timing=lambda w: f"results/tables/{FIGURES[w.name].table}.timing.csv",
        code=code("lecture17.reporting.figures"),
    output:
        png=report(
            "report/figures/{name}.png",
            caption="../report/figure.rst",
            category="图 Figures",
            labels={"图 figure": "{name}"},
        ),
        phone="report/figures/phone/{name}.png",  # the same figure at a phone's width
    log:
        "logs/figures/{name}.log",
    benchmark:
        "benchmarks/figure/{name}.tsv"
    wildcard_constraints:
        name=r"[^/]+",
    conda:
        "../../environment.yml"
    shell:
        "python -m lecture17.reporting.figures {wildcards.name} {input.table} --out {output.png} "
        "--phone-out {output.phone} 2> {log}"


rule script_seconds:
    # the lecture's "最慢的 05 约 105 秒，其余几秒到半分钟": each script's jobs' wall time,
    # summed from the benchmark files, once every demo's table (and so every job) is done
    input:
        tables=expand("results/tables/{demo}.csv", demo=TABLES),
        code=code("lecture17.reporting.provenance"),
    output:
        table="results/tables/build.csv",
        timing="results/tables/build.timing.csv",
    log:
        "logs/tables/build.log",
    benchmark:
        "benchmarks/script_seconds/build.tsv"
    conda:
        "../../environment.yml"
    shell:
        "python -m lecture17.reporting.provenance benchmarks --out {output.table} 2> {log}"


rule report:
    input:
        tables=expand("results/tables/{demo}.csv", demo=[*TABLES, "build"]),
        timings=expand("results/tables/{demo}.timing.csv", demo=[*TABLES, "build"]),
        figures=expand("report/figures/{name}.png", name=FIGURE_NAMES),
        phones=expand("report/figures/phone/{name}.png", name=FIGURE_NAMES),  # found beside them
        ledger=sorted(str(p) for p in Path("report/ledger").glob("*.[py]*")),
        views=sorted(str(p) for p in Path("report/views").glob("*.yaml")),
        lessons="report/lessons.yaml",  # each section's lesson (Report.lesson)
        notices="report/notices.yaml",  # what to notice under each figure (Report.figure)
        template="report/templates/lecture17.md.j2",
        page="report/templates/lecture17.html.j2",  # the web page around it (CSS, contents)
        macros="report/templates/macros.md.j2",  # sentences worded from data
        config=os.path.relpath(workflow.configfiles[0]),
        code=ALL_CODE,
    output:
        md="report/lecture17.md",
        html="report/lecture17.html",
        config="results/config.yaml",  # the config this build ran with, for `lecture17 diff`
        manifest="results/manifest.json",  # the tables it read, hashed: what `diff` judges
    log:
        "logs/report.log",
    benchmark:
        "benchmarks/report/report.tsv"
    conda:
        "../../environment.yml"
    params:
        recorded=" ".join(RECORDED),  # tables from runs recorded on a GPU (report/measured/)
    shell:
        "python -m lecture17.reporting.report --tables {input.tables} --figures {input.figures} "
        "--ledger report/ledger --views report/views --lessons {input.lessons} --notices {input.notices} --template {input.template} --page {input.page} "
        "--config {input.config} --code {input.code} --recorded {params.recorded} "
        "--out-md {output.md} --out-html {output.html} --out-config {output.config} "
        "--out-manifest {output.manifest} 2> {log}"
