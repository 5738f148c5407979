#!/usr/bin/env bash
# A sweep on a real Slurm (issue 16): starts a single-node cluster (munged, slurmctld and slurmd on
# 127.0.0.1, Debian's slurm-wlm and munge) whose every file lives in a temporary folder, submits the
# script `strata sweep --slurm-script` writes for 4 shards as a job array, merges the shards and
# checks the merged results.csv is byte-identical to the unsharded sweep's, after playing a failed
# shard: with shard 3's rows gone the merge exits 2 naming the missing points, and `sbatch --array=3`
# of the same script mends it. Everything it started is stopped and the folder removed on exit, whatever
# happens.
#   usage: tests/slurm_sweep.sh STRATA_BINARY
# Exit 77 (ctest: skipped) when Slurm or munge is not installed or this is not root, except under
# CI=true, where that is a failure: CI installs them (tools/install-deps slurm).
set -euo pipefail
strata="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
sweep="$here/data/sweeps/slurm-4-families.json"

missing=()
for c in munged mungekey slurmctld slurmd sbatch sinfo squeue scancel; do
  command -v "$c" >/dev/null || missing+=("$c")
done
[ "$(id -u)" -eq 0 ] || missing+=("root (slurmd runs the jobs as their user)")
if [ ${#missing[@]} -gt 0 ]; then
  if [ "${CI:-}" = true ]; then
    echo "FAIL: CI=true but missing: ${missing[*]} (tools/install-deps slurm installs slurm-wlm and munge)" >&2
    exit 1
  fi
  echo "skipped: missing ${missing[*]} (apt-get install slurm-wlm munge)" >&2
  exit 77
fi

tmp="$(mktemp -d /tmp/strata-slurm.XXXXXX)"
chmod 755 "$tmp"  # munged wants every folder above its socket searchable by all
pids=()
cleanup() {
  local status=$?
  set +e
  if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then
    scancel --quiet --full --user=root 2>/dev/null
    for _ in $(seq 20); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.5; done
  fi
  if [ $status -ne 0 ]; then
    for log in "$tmp"/*.log; do
      [ -f "$log" ] && { echo "--- $log (last lines)" >&2; tail -n 15 "$log" >&2; }
    done
  fi
  # Newest first: slurmd, slurmctld, then munged, each by the process id this script started.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null
    for _ in $(seq 50); do kill -0 "${pids[i]}" 2>/dev/null || break; sleep 0.1; done
    kill -9 "${pids[i]}" 2>/dev/null
    wait "${pids[i]}" 2>/dev/null
  done
  rm -rf "$tmp"
  exit $status
}
trap cleanup EXIT
trap 'exit 143' INT TERM

# A port nobody listens on (the machine may run other clusters or tests).
free_port() {
  local p
  for ((p = $1; p < $1 + 200; p++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
  echo "no free port from $1" >&2
  return 1
}
base=$((20000 + ($$ % 1000) * 10))  # below the ephemeral ports (32768 and up)
ctld_port="$(free_port "$base")"
slurmd_port="$(free_port $((ctld_port + 1)))"

mungekey --create --keyfile="$tmp/munge.key"
munged --foreground --key-file="$tmp/munge.key" --socket="$tmp/munge.socket" --pid-file="$tmp/munged.pid" \
  --seed-file="$tmp/munged.seed" --log-file="$tmp/munged.log" >>"$tmp/munged.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$tmp/munge.socket" ] && break; sleep 0.1; done
[ -S "$tmp/munge.socket" ] || { echo "FAIL: munged did not start" >&2; exit 1; }

host="$(hostname -s)"
mkdir -p "$tmp/state" "$tmp/spool"
# Only what a one-node cluster needs; no cgroups, accounting or MPI, all paths in $tmp.
cat >"$tmp/slurm.conf" <<EOF
ClusterName=strata-ci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
PlugStackConfig=/dev/null
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -D -i >>"$tmp/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -N "$host" >>"$tmp/slurmd.log" 2>&1 &
pids+=($!)
for _ in $(seq 60); do [ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && break; sleep 0.5; done
[ "$(sinfo -h -o %T 2>/dev/null)" = idle ] || { echo "FAIL: the node did not come up: $(sinfo 2>&1)" >&2; exit 1; }
echo "slurm up: node $host, slurmctld port $ctld_port, slurmd port $slurmd_port"

cd "$tmp"
# The generated script, submitted as is; --wait returns when every array task has ended, with
# a non-zero status if one failed.
"$strata" sweep "$sweep" --out "$tmp/runs/merged" --slurm-script --shards 4 --partition ci --time 20 >sweep.sbatch
cat sweep.sbatch
timeout 900 sbatch --wait sweep.sbatch
for i in 1 2 3 4; do
  grep -q '"shard": '"$i" "runs/merged/shards/$i/settings.json" || { echo "FAIL: shard $i did not run" >&2; exit 1; }
done
merge() { "$strata" sweep --merge runs/merged/shards/{1..4} --out "$1"; }

# A failed shard (killed before its first family was done: its folder holds the sweep and its
# options but no row): the merge refuses and names the points missing; rerunning that array task
# mends it.
: >runs/merged/shards/3/results.jsonl
if merge runs/refused 2>refused.txt; then
  echo "FAIL: merged without shard 3's points" >&2
  exit 1
fi
cat refused.txt
grep -q 'the folders hold 12 of the sweep.s 16 points; missing: ' refused.txt ||
  { echo "FAIL: the refusal does not name the missing points" >&2; exit 1; }
timeout 900 sbatch --wait --array=3 sweep.sbatch
merge runs/merged

"$strata" sweep "$sweep" --out runs/whole -q -j 2
if ! cmp runs/merged/results.csv runs/whole/results.csv; then
  diff runs/merged/results.csv runs/whole/results.csv | head -20 >&2
  echo "FAIL: the merged CSV differs from the unsharded one" >&2
  exit 1
fi
echo "PASS: $(($(wc -l <runs/whole/results.csv) - 1)) rows, 4 Slurm shards merged = unsharded, byte for byte"
