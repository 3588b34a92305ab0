#!/usr/bin/env bash
# A real run of profiles/slurm on a single-node SLURM cluster started on localhost (Debian's
# slurm-wlm and munge), compared byte for byte with a local run of the same targets.
#
#   sudo tools/slurm_local.sh [WORKDIR]          # from the repository root; needs root (slurmd)
#
# It installs slurm-wlm and munge with apt-get if they are missing, writes munge's key/socket and a
# minimal slurm.conf into WORKDIR (a new temporary folder by default; nothing under /etc is changed),
# starts munged, slurmctld and slurmd, copies the tiny CI configuration (.test/) twice, runs
# TARGETS once through `snakemake --profile profiles/slurm` (the profile's own default-resources plus
# the local cluster's default partition) and once locally, compares the sha256 of every file under
# results/ except results/benchmarks/ (timings), prints the versions, and stops the daemons.
# Exit status 0 only if every output is byte-identical, 1 if they differ, 2 if a run fails, 3 if this
# machine cannot host the cluster or run its jobs (daemons do not start, the node is not idle within
# 60 s, or a job stays PENDING or RUNNING over SLURM_LOCAL_STUCK_AFTER s, default 240). PYTHON selects the interpreter with the
# package installed (default: .venv/bin/python if present, else python3).
#
# A measured run of the real workflow (e.g. the sharded publication-density phase diagram):
#   SLURM_LOCAL_CONFIG=repo SLURM_LOCAL_COMPARE=0 SLURM_LOCAL_STUCK_AFTER=3600 SLURM_LOCAL_TIMEOUT=7200 \
#   SLURM_LOCAL_ARGS="--configfile config/config.yaml config/phase_publication.yaml" \
#   SLURM_LOCAL_TARGETS="results/utility/phase_diagram/grid_k15_shard0of40.csv ..." sudo -E tools/slurm_local.sh
# SLURM_LOCAL_CONFIG=repo copies this checkout's files (git ls-files: no results/) instead of .test/;
# SLURM_LOCAL_TARGETS replaces the snakemake command's targets and SLURM_LOCAL_ARGS follows them (both runs;
# after the targets, so a --configfile list does not swallow them);
# SLURM_LOCAL_COMPARE=0 skips the local run and the comparison (exit 0 when the SLURM run succeeds);
# SLURM_LOCAL_TIMEOUT (default 900 s) bounds the SLURM run. Every run prints its wall time and the jobs'
# summed CPU and wall seconds from the rules' benchmark files (written to WORKDIR/slurm-run-jobs.tsv).
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
read -ra TARGETS <<<"${SLURM_LOCAL_TARGETS:-results/accounting/table4.csv results/data/summary.csv}"
read -ra EXTRA_ARGS <<<"${SLURM_LOCAL_ARGS:-}"
CONFIG_SOURCE="${SLURM_LOCAL_CONFIG:-ci}"
COMPARE="${SLURM_LOCAL_COMPARE:-1}"
[[ "$CONFIG_SOURCE" == ci || "$CONFIG_SOURCE" == repo ]] \
    || { printf '[slurm_local] error: SLURM_LOCAL_CONFIG must be ci or repo; got %s\n' "$CONFIG_SOURCE" >&2; exit 2; }
WORK="${1:-$(mktemp -d -t slurm-local.XXXXXX)}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x "$REPO/.venv/bin/python" ]]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON=python3; fi
fi

# the library of this checkout (the venv may hold another copy); sbatch exports the environment to jobs
export PYTHONPATH="$REPO/src${PYTHONPATH:+:$PYTHONPATH}"

say() { printf '[slurm_local] %s\n' "$*"; }
die() { printf '[slurm_local] error: %s\n' "$*" >&2; exit 2; }
# This machine cannot host the cluster or run its jobs: exit 3 (tests/test_slurm_local.py skips on it,
# quoting this line); outputs that differ exit 1, any other failure 2.
env_fail() { printf '[slurm_local] environment: %s\n' "$*"; exit 3; }

[[ "$(id -u)" == 0 ]] || die "run as root (slurmd must start as root); got uid $(id -u)"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    say "installing slurm-wlm and munge with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >"$WORK/apt.log" 2>&1 \
        || die "apt-get install slurm-wlm munge failed; see $WORK/apt.log"
fi
"$PYTHON" -c "import snakemake_executor_plugin_slurm" 2>/dev/null \
    || die "PYTHON=$PYTHON lacks snakemake-executor-plugin-slurm (pip install -e '.[test]')"

# Unix sockets (munge's, and those slurmstepd makes in SlurmdSpoolDir, e.g. spool/localhost_1.4294967291)
# must have paths under 108 bytes; WORK may be long (pytest's tmp_path under xdist is ~90 bytes, and
# the jobs were then held forever: "launch failed requeued held"). They live in a short folder instead:
# under SLURM_LOCAL_SOCKET_DIR if set, else in the system's default temporary folder (mktemp -t with TMPDIR
# unset, since pytest's TMPDIR can be as long as WORK). The folder may take 40 bytes: its longest socket
# path, spool/localhost_1.4294967291 included, then stays well under 108.
if [[ -n "${SLURM_LOCAL_SOCKET_DIR:-}" ]]; then
    SOCK="$(mktemp -d -p "$SLURM_LOCAL_SOCKET_DIR" slurm-sock.XXXXXX)"
else
    SOCK="$(env -u TMPDIR mktemp -d -t slurm-sock.XXXXXX)"
fi
(( ${#SOCK} <= 40 )) || die "socket folder $SOCK is ${#SOCK} bytes, over 40 (Unix sockets need paths under 108 bytes); set SLURM_LOCAL_SOCKET_DIR to a short folder"
chmod 700 "$SOCK"

# ---- munge: own key, pid and log under $WORK/munge, socket under $SOCK ---------------------------
M="$WORK/munge"
mkdir -p "$M"
chmod 700 "$M"
dd if=/dev/urandom of="$M/munge.key" bs=1024 count=1 status=none
chmod 400 "$M/munge.key"
munged --force --key-file="$M/munge.key" --socket="$SOCK/munge.socket" --pid-file="$M/munged.pid" \
    --log-file="$M/munged.log" --seed-file="$M/munged.seed" || env_fail "munged did not start; see $M/munged.log"
timeout 20 munge --socket="$SOCK/munge.socket" -n | timeout 20 unmunge --socket="$SOCK/munge.socket" >/dev/null \
    || env_fail "munge round trip failed; see $M/munged.log"

# ---- slurm.conf: one node (this machine as "localhost"), one partition, no cgroup, no database ---
S="$WORK/slurm"
mkdir -p "$S/state" "$SOCK/spool"
CPUS="$(nproc)"; (( CPUS > 2 )) && CPUS=2
MEM_MB="$(awk '/MemTotal/ {print int($2 / 1024) - 512}' /proc/meminfo)"
cat >"$S/slurm.conf" <<EOF
ClusterName=local
SlurmctldHost=localhost
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$SOCK/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$S/state
SlurmdSpoolDir=$SOCK/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=300
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$S/slurm.conf"
# snakemake-executor-plugin-slurm-jobstep deletes every SLURM_* variable but the job's identity before
# its nested `srun`, SLURM_CONF included (it assumes /etc/slurm/slurm.conf). Rather than write under
# /etc, an `srun` first on PATH puts SLURM_CONF back and runs the real one.
mkdir -p "$WORK/bin"
printf '#!/bin/sh\nSLURM_CONF=%q exec %q "$@"\n' "$SLURM_CONF" "$(command -v srun)" >"$WORK/bin/srun"
chmod +x "$WORK/bin/srun"
export PATH="$WORK/bin:$PATH"

stop() {
    for pidfile in "$S/slurmd.pid" "$S/slurmctld.pid" "$M/munged.pid"; do
        [[ -s "$pidfile" ]] && kill "$(cat "$pidfile")" 2>/dev/null || true
    done
    sleep 1
    rm -rf "$SOCK"
}
trap stop EXIT
if (exec 3<>/dev/tcp/127.0.0.1/16817) 2>/dev/null; then env_fail "port 16817 is in use (another slurmctld?)"; fi
timeout 60 slurmctld -f "$SLURM_CONF" || env_fail "slurmctld did not start; see $S/slurmctld.log"
timeout 60 slurmd -f "$SLURM_CONF" -N localhost || env_fail "slurmd did not start; see $S/slurmd.log"
for _ in $(seq 60); do
    state="$(timeout 20 sinfo -h -N -n localhost -o %t 2>/dev/null || true)"
    [[ "$state" == idle* ]] && break
    sleep 1
done
[[ "$state" == idle* ]] || env_fail "node localhost not idle after 60 s (state '$state'); see $S/*.log"
PARTITION="$(timeout 20 sinfo -h -o '%P' | sed -n 's/\*$//p' | head -1)"
say "cluster up: node localhost ($CPUS CPUs, $MEM_MB MB), default partition '$PARTITION'"

# ---- the two runs ---------------------------------------------------------------------------------
copy_config() {
    rm -rf "$1"
    if [[ "$CONFIG_SOURCE" == repo ]]; then
        mkdir -p "$1"
        (cd "$REPO" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$1" 2>/dev/null) || true
        [[ -f "$1/Snakefile" ]] || die "could not copy the checkout into $1"
    else
        cp -r "$REPO/.test" "$1"
    fi
    rm -rf "$1/results" "$1/logs" "$1/.snakemake" "$1/benchmarks"
}
# The jobs' CPU and wall seconds from the rules' benchmark files of a run folder; prints the sums.
job_times() {
    "$PYTHON" - "$1" "$2" <<'EOF'
import csv, pathlib, sys
rows = []
for path in sorted(pathlib.Path(sys.argv[1], "results", "benchmarks").rglob("*.tsv")):
    with path.open() as handle:
        record = next(csv.DictReader(handle, delimiter="\t"))
    rows.append((str(path.relative_to(sys.argv[1])), float(record["cpu_time"]), float(record["s"])))
with open(sys.argv[2], "w") as out:
    out.write("job\tcpu_s\twall_s\n" + "".join(f"{name}\t{cpu:.2f}\t{wall:.2f}\n" for name, cpu, wall in rows))
print(f"{len(rows)} jobs with benchmark files: {sum(r[1] for r in rows):.1f} CPU s, {sum(r[2] for r in rows):.1f} s summed wall")
EOF
}
SNAKEMAKE=("$PYTHON" -m snakemake -s "$REPO/Snakefile")
# The profile's default-resources, repeated with the partition (the command line replaces the list).
mapfile -t RESOURCES < <("$PYTHON" - "$REPO/profiles/slurm/config.yaml" <<'EOF'
import sys, yaml
for key, value in yaml.safe_load(open(sys.argv[1]))["default-resources"].items():
    print(f"{key}={value}")
EOF
)
copy_config "$WORK/slurm-run"
[[ "$COMPARE" == 0 ]] || copy_config "$WORK/local-run"
say "slurm run: --profile profiles/slurm --default-resources ${RESOURCES[*]} slurm_partition=$PARTITION"
start=$(date +%s)
# setsid: the run is its own process group, so the watchdog can stop snakemake and its children at once
(cd "$WORK/slurm-run" && exec setsid timeout "${SLURM_LOCAL_TIMEOUT:-900}" "${SNAKEMAKE[@]}" --profile "$REPO/profiles/slurm" \
    --default-resources "${RESOURCES[@]}" "slurm_partition=$PARTITION" \
    --slurm-init-seconds-before-status-checks 2 --slurm-status-command squeue "${TARGETS[@]}" "${EXTRA_ARGS[@]}") >"$WORK/slurm-run.log" 2>&1 &
RUN_PID=$!
# Watchdog: each job takes seconds here. A job that SLURM keeps PENDING, or RUNNING, for over
# $STUCK_AFTER s means this machine cannot run SLURM jobs (resources, a sandbox that blocks the job
# step, ...): stop and exit with status 3 and SLURM's own words, so the test can tell an environment
# that cannot host the cluster from outputs that differ (status 1) or a failed run (status 2).
STUCK_AFTER="${SLURM_LOCAL_STUCK_AFTER:-240}"
declare -A FIRST_SEEN
seconds_of() {  # squeue's %M: [days-][hours:]minutes:seconds
    local d=0 rest="$1" total=0 part
    [[ "$rest" == *-* ]] && { d="${rest%%-*}"; rest="${rest#*-}"; }
    IFS=: read -ra parts <<<"$rest"
    for part in "${parts[@]}"; do total=$(( total * 60 + 10#$part )); done
    echo $(( d * 86400 + total ))
}
while kill -0 "$RUN_PID" 2>/dev/null; do
    sleep 5
    stuck=""
    while read -r id state elapsed reason; do
        [[ -z "$id" ]] && continue
        if [[ "$state" == PENDING ]]; then
            : "${FIRST_SEEN[$id]:=$(date +%s)}"
            (( $(date +%s) - FIRST_SEEN[$id] > STUCK_AFTER )) && stuck="job $id PENDING ($reason)"
        elif [[ "$state" == RUNNING ]] && (( $(seconds_of "$elapsed") > STUCK_AFTER )); then
            stuck="job $id RUNNING for $elapsed"
        fi
    done < <(timeout 20 squeue -h -o '%i %T %M %r' 2>/dev/null || true)
    if [[ -n "$stuck" ]]; then
        # cancel first: on SIGTERM snakemake waits for its jobs, which a held job never ends
        timeout 20 scancel --user "$(id -un)" 2>/dev/null || true
        kill -TERM -- "-$RUN_PID" 2>/dev/null || true
        for _ in $(seq 30); do kill -0 "$RUN_PID" 2>/dev/null || break; sleep 1; done
        kill -KILL -- "-$RUN_PID" 2>/dev/null || true
        wait "$RUN_PID" 2>/dev/null || true
        echo "--- squeue"; timeout 20 squeue -h -t all -o '%i %j %T %M %r' 2>/dev/null || true
        echo "--- slurmd.log (last 15 lines)"; tail -15 "$S/slurmd.log" 2>/dev/null || true
        echo "--- slurm-run.log (last 15 lines)"; tail -15 "$WORK/slurm-run.log" 2>/dev/null || true
        env_fail "a SLURM job was stuck for over $STUCK_AFTER s: $stuck"
    fi
done
wait "$RUN_PID" || { tail -40 "$WORK/slurm-run.log"; die "the slurm run failed; see $WORK/slurm-run.log"; }
say "slurm run took $(( $(date +%s) - start )) s; jobs SLURM ran:"
grep -Eo "Job [0-9]+ has been submitted with SLURM jobid [0-9]+" "$WORK/slurm-run.log" | sed 's/^/    /' || true
timeout 20 squeue -h -t all -o '    %i %j %P %T %M' 2>/dev/null || true
say "slurm run: $(job_times "$WORK/slurm-run" "$WORK/slurm-run-jobs.tsv")"
if [[ "$COMPARE" == 0 ]]; then
    say "OK: the SLURM run succeeded (no local run: SLURM_LOCAL_COMPARE=0; work folder $WORK)"
    exit 0
fi
start=$(date +%s)
(cd "$WORK/local-run" && timeout 600 "${SNAKEMAKE[@]}" --cores 2 "${TARGETS[@]}" "${EXTRA_ARGS[@]}") >"$WORK/local-run.log" 2>&1 \
    || { tail -40 "$WORK/local-run.log"; die "the local run failed; see $WORK/local-run.log"; }
say "local run took $(( $(date +%s) - start )) s"

# ---- compare ----------------------------------------------------------------------------------------
hashes() { (cd "$1" && find results -type f ! -path 'results/benchmarks/*' -print0 | sort -z | xargs -0 sha256sum); }
hashes "$WORK/slurm-run" >"$WORK/slurm-run.sha256"
hashes "$WORK/local-run" >"$WORK/local-run.sha256"
say "sha256 of the outputs (slurm run | local run):"
join -j 2 -a 1 -a 2 -e MISSING -o 0,1.1,2.1 <(sort -k2 "$WORK/slurm-run.sha256") <(sort -k2 "$WORK/local-run.sha256") \
    | awk '{ printf "    %-55s %.16s | %.16s %s\n", $1, $2, $3, ($2 == $3 ? "same" : "DIFFERENT") }'

say "versions:"
echo "    $(timeout 20 sinfo -V) (Debian slurm-wlm $(dpkg-query -W -f='${Version}' slurm-wlm 2>/dev/null || echo '?'))"
echo "    $(munged -V 2>&1 | head -1)"
echo "    snakemake $("$PYTHON" -m snakemake --version)"
"$PYTHON" - <<'EOF'
from importlib.metadata import version
for name in ("snakemake-executor-plugin-slurm", "snakemake-executor-plugin-slurm-jobstep"):
    print(f"    {name} {version(name)}")
EOF

if cmp -s "$WORK/slurm-run.sha256" "$WORK/local-run.sha256"; then
    say "OK: $(wc -l <"$WORK/slurm-run.sha256") output files byte-identical (work folder $WORK)"
else
    say "FAIL: the outputs differ (work folder $WORK)"
    exit 1
fi
