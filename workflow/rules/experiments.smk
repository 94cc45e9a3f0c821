# The experiment rules, derived from the demo registry (src/lecture17/experiments/__init__.py):
# one rule body per kind of demo, one rule per registered rule name, so `--forcerun
# self_attention`, `benchmarks/<rule>/` and the SLURM profile's per-rule resources keep their
# names, and a new demo needs no edit here. (A loop with `name:` rather than `use rule … with:`:
# Snakemake takes a `use rule` target's name only as a literal.)
# Demo functions: src/lecture17/experiments/<module>.py; settings: config/config.yaml.

# A GPU job asks for the whole GPU (gpu=1 in a `device=cuda` build, so two never share one: run
# with `--resources gpu=1`, or on SLURM, which gives each its own) and the memory of its sizes.
GPU_RESOURCES = {"mem_mb": 16000, "runtime": 30}


for _rule, _demos in EXPERIMENT_RULES.items():
    if _demos[0].kind != "analytic":
        continue

    # analytic demos: one job per seed
    rule:
        name:
            _rule
        input:
            code=job_code,
        output:
            csv="results/{demo}/seed{seed}.csv",
            timing="results/{demo}/seed{seed}.timing.csv",
        log:
            "logs/{demo}/seed{seed}.log",
        benchmark:
            f"benchmarks/{_rule}/{{demo}}/seed{{seed}}.tsv"
        wildcard_constraints:
            demo=demo_pattern(_demos),
        conda:
            "../../environment.yml"
        threads: job_threads
        resources:
            slurm_extra=slurm_extra,
        params:
            settings=settings_json,
            registry=registry_entry,
            code=function_code,
        shell:
            "python -m lecture17.pipeline.warm lecture17.pipeline.job {wildcards.demo} --seed {wildcards.seed} "
            "--settings {params.settings:q} --out {output.csv} 2> {log}"


for _rule, _demos in EXPERIMENT_RULES.items():
    if _demos[0].kind == "analytic":
        continue

    # training (and GPU) demos: one job per (grid point, seed), each with its own CSV and log;
    # a demo that keeps its models (05.1) also writes them, one that reads them (06.6) reads
    # those of the same grid point and seed
    rule:
        name:
            _rule
        input:
            **({"models": read_models} if _demos[0].reads_models else {}),
            code=job_code,
        output:
            **(
                {"models": "results/{demo}/{setting}/seed{seed}.models.pt"}
                if _demos[0].keeps_models
                else {}
            ),
            csv="results/{demo}/{setting}/seed{seed}.csv",
            timing="results/{demo}/{setting}/seed{seed}.timing.csv",
        log:
            "logs/{demo}/{setting}/seed{seed}.log",
        benchmark:
            f"benchmarks/{_rule}/{{demo}}/{{setting}}/seed{{seed}}.tsv"
        wildcard_constraints:
            demo=demo_pattern(_demos),
        conda:
            "../../environment.yml"
        threads: job_threads
        resources:
            **(GPU_RESOURCES if _demos[0].kind == "gpu" else {}),
            gpu=lambda w: int(config["device"] == "cuda"),
            slurm_extra=slurm_extra,
        params:
            settings=training_settings_json,
            grid=grid_json,
            registry=registry_entry,
            code=function_code,
            models=models_argument,
        # no Python expression on the loop's variables here: Snakemake evaluates a rule's shell
        # again when the job runs, after the loop has moved on (a reading demo then trained its
        # models again instead of reading them)
        shell:
            "python -m lecture17.pipeline.warm lecture17.pipeline.job {wildcards.demo} --seed {wildcards.seed} "
            "--settings {params.settings:q} --grid {params.grid:q} --out {output.csv} "
            "{params.models}2> {log}"


# The recorded demos (07.x, 08.x): `snakemake robustness` (make robustness) runs their jobs
# into results/ with the rules above, then copies them with their record.json (settings, code
# hashes, machine) to report/measured/<demo>/, which a default build aggregates.


rule record:
    input:
        runs=lambda w: run_csvs(w.demo),
        timings=lambda w: [timing_path(p) for p in run_csvs(w.demo)],
        code=job_code,
    output:
        f"{MEASURED}/{{demo}}/record.json",
    log:
        "logs/record/{demo}.log",
    wildcard_constraints:
        demo=demo_pattern([DEMOS[d] for d in RECORDED_DEMOS]) or "$^",
    conda:
        "../../environment.yml"
    params:
        settings=training_settings_json,
        device=config["device"],
        configfile=os.path.relpath(workflow.configfiles[0]),
    shell:
        "python -m lecture17 recorded record {wildcards.demo} --device {params.device} "
        "--config {params.configfile:q} 2> {log}"


rule robustness:
    input:
        expand(f"{MEASURED}/{{demo}}/record.json", demo=RECORDED_DEMOS),
