#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, from Debian's packages (slurm-wlm, munge): for
# tests/pipeline/test_slurm.py, and for trying `snakemake --profile workflow/profiles/slurm` without a
# real cluster (docs/SLURM.md).
#
#   sudo bash workflow/scripts/slurm_cluster.sh up [STATE]     install if missing, write the
#                     config from this machine's CPUs and memory, start munged, slurmctld and
#                     slurmd, wait until the node is idle and a job step runs
#   sudo bash workflow/scripts/slurm_cluster.sh down [STATE]   cancel the cluster's jobs, stop
#                     exactly the processes `up` started (their pids, in STATE/pids), remove
#                     the config it wrote
#   sudo bash workflow/scripts/slurm_cluster.sh install        only the packages
#
# STATE (default: the one named in the config `up` wrote, else /tmp/lecture17-slurm) holds the
# munge key and socket, the daemons' state, pid files and logs. Exit status 77: the cluster
# cannot be had here (not root, no apt-get, the packages do not install, or this machine runs
# or configures a SLURM of its own, which is never touched); the reason is the last line on
# stderr. tests/pipeline/test_slurm.py skips on it.
#
# Why /etc/slurm/slurm.conf and not SLURM_CONF: the job's own `srun` (Snakemake runs every job
# as a step inside its allocation) reads /etc/slurm/slurm.conf. And why `down` removes it: with
# the client tools installed and a slurm.conf naming no running controller, every `snakemake`
# start waits ~10 s (the SLURM executor plugin runs `scontrol show config` when it is imported);
# with no slurm.conf that call fails at once.
set -euo pipefail

CONF=/etc/slurm/slurm.conf
MARK="# Written by lecture17's workflow/scripts/slurm_cluster.sh"
PACKAGES=(slurm-wlm munge)
CANNOT=77

say() { echo "slurm_cluster: $*" >&2; }
cannot() {
    say "$*"
    exit "$CANNOT"
}

# -----------------------------------------------------------------------------
# the machine: root, the packages, no SLURM of its own

have_packages() {
    command -v munged >/dev/null && command -v slurmctld >/dev/null &&
        command -v slurmd >/dev/null && command -v sbatch >/dev/null
}

install_packages() {
    [[ $EUID -eq 0 ]] || cannot "needs root (it installs packages and runs the daemons as root)"
    have_packages && return
    command -v apt-get >/dev/null ||
        cannot "slurm-wlm and munge are not installed and there is no apt-get to install them"
    say "installing ${PACKAGES[*]} (apt-get)"
    local apt=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends)
    "${apt[@]}" "${PACKAGES[@]}" >&2 ||
        { apt-get update -qq >&2 && "${apt[@]}" "${PACKAGES[@]}" >&2; } ||
        cannot "apt-get could not install ${PACKAGES[*]}"
}

# The STATE named in the slurm.conf this script wrote, if there is one.
conf_state() {
    local first
    [[ -f $CONF ]] || return 0
    first=$(head -n 1 "$CONF")
    [[ $first == "$MARK (state: "*")" ]] || return 0
    first=${first#"$MARK (state: "}
    echo "${first%)}"
}

ours() { [[ $(conf_state) == "$STATE" ]]; }

refuse_foreign_slurm() {
    local name pids
    for name in slurmctld slurmd slurmdbd; do
        if pids=$(pgrep -d ' ' -x "$name"); then
            cannot "a $name of this machine's own is running (pid $pids): not touching it"
        fi
    done
    if [[ -f $CONF ]] && ! grep -qF "$MARK" "$CONF"; then
        cannot "$CONF is this machine's own configuration: not touching it"
    fi
}

# -----------------------------------------------------------------------------
# up: munge key and config, daemons, wait until the node is idle

write_config() {
    local host node
    host=$(hostname -s)
    # slurmd -C prints this machine's node line: CPUs, sockets, cores, threads, RealMemory
    node=$(slurmd -C | head -n 1)
    mkdir -p "$(dirname "$CONF")"
    cat >"$CONF" <<EOF
$MARK (state: $STATE)
# A one-node test cluster; \`slurm_cluster.sh down\` removes this file.
ClusterName=lecture17
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$STATE/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$STATE/slurmctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
# no cgroups, no accounting database: what a container or a CI machine allows
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# without accounting, squeue is the status command: finished jobs stay visible to it for a day
MinJobAge=86400
ReturnToService=2
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munged() {
    mkdir -p "$STATE/munge"
    chmod 700 "$STATE/munge"
    [[ -f $STATE/munge/munge.key ]] || mungekey --create --keyfile "$STATE/munge/munge.key"
    # --force: munged runs as root here, as the other two daemons do
    munged --force --socket "$STATE/munge/munge.socket" --key-file "$STATE/munge/munge.key" \
        --pid-file "$STATE/munged.pid" --log-file "$STATE/munged.log" \
        --seed-file "$STATE/munge/munged.seed" </dev/null >>"$STATE/munged.out" 2>&1
    record munged "$STATE/munged.pid"
}

start_slurm() {
    mkdir -p "$STATE/slurmctld" "$STATE/slurmd"
    # -c: a clean start, no jobs from an earlier cluster in this STATE
    slurmctld -c </dev/null >>"$STATE/slurmctld.out" 2>&1
    record slurmctld "$STATE/slurmctld.pid"
    slurmd </dev/null >>"$STATE/slurmd.out" 2>&1
    record slurmd "$STATE/slurmd.pid"
}

# The daemon's pid (from the pid file it writes once it has forked), kept in STATE/pids.
record() {
    local name=$1 file=$2 i
    for ((i = 0; i < 100; i++)); do
        if [[ -s $file ]] && [[ $(cat "/proc/$(cat "$file")/comm" 2>/dev/null) == "$name" ]]; then
            echo "$name $(cat "$file")" >>"$STATE/pids"
            return
        fi
        sleep 0.1
    done
    say "$name did not start; its log:"
    tail -n 20 "$STATE/$name.log" "$STATE/$name.out" >&2 2>/dev/null || true
    return 1
}

wait_until_idle() {
    local i state
    for ((i = 0; i < 120; i++)); do
        state=$(sinfo --noheader --node "$(hostname -s)" --format %T 2>/dev/null || true)
        [[ $state == idle ]] && return
        sleep 0.5
    done
    say "the node is not idle after 60 s (state: ${state:-none}); slurmctld's log:"
    tail -n 20 "$STATE/slurmctld.log" >&2 || true
    return 1
}

# Whether a daemon recorded in STATE/pids (the argument) still runs.
running() {
    local name pid
    [[ -s $1/pids ]] || return 1
    while read -r name pid; do
        [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$name" ]] && return 0
    done <"$1/pids"
    return 1
}

# A failed `up` (set -e ends the script) stops what it had started.
undo_up() {
    if (($1 != 0)); then
        say "up failed: stopping what it started"
        down
    fi
}

up() {
    local left
    install_packages
    left=$(conf_state)
    if [[ -n $left ]]; then
        if running "$left"; then
            cannot "a cluster of this script's is up, maybe in use (state: $left):" \
                "bring it down first (slurm_cluster.sh down $left)"
        fi
        rm -f "$CONF" # left by an `up` whose daemons are gone (its caller was killed)
    fi
    refuse_foreign_slurm
    # munge's socket lives in STATE, and a socket's path has at most 107 characters
    ((${#STATE} <= 80)) || { say "STATE is too long (over 80 characters): $STATE" && exit 1; }
    mkdir -p "$STATE"
    : >"$STATE/pids"
    trap 'undo_up $?' EXIT
    write_config
    start_munged
    start_slurm
    wait_until_idle
    # one job step, as each Snakemake job will run its rule: the credentials work end to end
    timeout 60 srun --nodes 1 --ntasks 1 --time 1 true
    trap - EXIT
    say "up: $(sinfo --noheader --format '%P %D node(s) %c CPUs %m MB %T') (state: $STATE)"
}

# -----------------------------------------------------------------------------
# down: the cluster's jobs, then exactly the daemons `up` started, then its config

cancel_jobs() {
    local jobs i
    mapfile -t jobs < <(squeue --noheader --states PENDING,RUNNING,SUSPENDED --format %A 2>/dev/null)
    ((${#jobs[@]})) || return 0
    say "cancelling jobs ${jobs[*]}"
    scancel "${jobs[@]}" || true
    for ((i = 0; i < 40; i++)); do
        [[ -z $(squeue --noheader --states RUNNING,COMPLETING --format %A 2>/dev/null) ]] && return
        sleep 0.25
    done
}

stop() {
    local name=$1 pid=$2 i
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$name" ]] || return 0 # gone already
    kill -TERM "$pid" || return 0
    for ((i = 0; i < 100; i++)); do
        [[ -d /proc/$pid ]] || return 0
        sleep 0.1
    done
    say "$name (pid $pid) still runs after 10 s: SIGKILL"
    kill -KILL "$pid" || true
}

down() {
    local name pid
    [[ $EUID -eq 0 ]] || cannot "needs root"
    if [[ -s $STATE/pids ]]; then
        if ours; then cancel_jobs; fi
        # the reverse order of `up`: slurmd, slurmctld, then munged, which both use
        tac "$STATE/pids" | while read -r name pid; do
            stop "$name" "$pid"
        done
        : >"$STATE/pids"
    fi
    if ours; then rm -f "$CONF"; fi
    say "down (state: $STATE)"
}

# -----------------------------------------------------------------------------

command=${1:-}
STATE=${2:-$(conf_state)}
STATE=$(realpath -m "${STATE:-/tmp/lecture17-slurm}")
case $command in
up) up ;;
down) down ;;
install) install_packages ;;
*)
    echo "usage: $0 up|down [STATE] | install" >&2
    exit 2
    ;;
esac
