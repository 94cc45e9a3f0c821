# Lecture 17 · Transformer Networks — the whole companion, from settings to report.
#
#   snakemake --cores 1            build everything (report/lecture17.md and .html)
#   snakemake -n                   what would run, and why
#   snakemake --list-changes params|code|input
#
# Layout: config/config.yaml (settings, with § references) → workflow/rules/*.smk (the experiment
# rules, derived from the demo registry; aggregation; figures and report) → src/lecture17/ (the
# code) → results/ → report/. docs/ARCHITECTURE.md has the picture.

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/report.smk"


# Snakemake's default --max-jobs-per-timespan (100/1s) starts a 1-second timer in every
# scheduling round, and each timer, firing, starts a round and another timer: after n jobs have
# finished, about n rounds a second, each re-reading the size of every ready job's inputs
# (JobScheduler.update_input_sizes). In the full build that kept Snakemake's own process at 45 %
# of one of two cores (py-spy; 261 rounds for 26 jobs, where 26 do). A local build has no
# submission rate to limit: without the limiter, a round comes when a job finishes. (A longer
# timespan keeps the process alive until its last timer fires.) A cluster keeps the limit.
#
# A local build also starts a warm-start server (lecture17/pipeline/warm.py): its jobs fork from
# a process that has imported torch and pandas once, instead of each importing them (2–3.5 s a
# job; results byte-identical). LECTURE17_WARM=0 turns it off. Not for a GPU build: CUDA, once
# initialised in a process, cannot be used in its forked children.
#
# A build told to stop stops: SIGTERM no longer waits on the scheduler's lock from the thread
# that holds it, and a CSV finished as the stop came is not left marked incomplete
# (lecture17/pipeline/stopping.py).
stopping.forget_whole_csvs()


onstart:
    stopping.graceful_sigterm(workflow.scheduler)
    if workflow.local_exec:
        workflow.scheduler.job_rate_limiter = None
    if workflow.local_exec and config["device"] == "cpu":
        WARM_SERVER.append(warm.start_server(JOB_ENV, Path("logs/warm-start.log")))


onsuccess:
    warm.stop_server(WARM_SERVER.pop() if WARM_SERVER else None)


onerror:
    warm.stop_server(WARM_SERVER.pop() if WARM_SERVER else None)


rule all:
    default_target: True
    input:
        "report/lecture17.md",
        "report/lecture17.html",
