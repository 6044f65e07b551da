#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the slurm executor's tests and
# for trying `zcube eval ... --executor slurm` (see docs/distributed.md).
#
#   eval "$(bash scripts/local-slurm.sh start)"   # prints export SLURM_CONF=... ZCUBE_SLURM_DIR=...
#   bash scripts/local-slurm.sh status            # sinfo of the cluster in $ZCUBE_SLURM_DIR
#   bash scripts/local-slurm.sh stop              # ends exactly the daemons start started
#
# Everything lives in a fresh temporary folder (or $ZCUBE_SLURM_DIR for start, a
# folder the munge user can reach):
# its own munged (own socket, pid, seed and log files; the system key
# /etc/munge/munge.key, created by the munge package), slurmctld and slurmd on
# free ports, with the node's CPUs and memory. Several such clusters can run at
# once. stop reads the PIDs the daemons wrote there and kills those only.
# Needs root (slurmd) and Debian's slurm-wlm and munge (scripts/install-deps.sh).
set -euo pipefail
cmd=${1:-}

free_port() {
    /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

pid_of() { [ -s "$1" ] && cat "$1"; }

case "$cmd" in
start)
    for p in slurmctld slurmd munged sbatch; do
        command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] || { echo "local-slurm: $p not found (apt-get install slurm-wlm munge)" >&2; exit 1; }
    done
    [ -r /etc/munge/munge.key ] || { echo "local-slurm: no /etc/munge/munge.key (reinstall munge)" >&2; exit 1; }
    D=${ZCUBE_SLURM_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/zcube-slurm.XXXXXX")}
    mkdir -p "$D/state" "$D/spool" "$D/log" "$D/munge"
    chmod 755 "$D"
    chown munge:munge "$D/munge"
    chmod 755 "$D/munge"
    runuser -u munge -- /usr/sbin/munged --socket="$D/munge/munge.sock" --pid-file="$D/munge/munged.pid" \
        --log-file="$D/munge/munged.log" --seed-file="$D/munge/munged.seed"
    for _ in $(seq 50); do [ -S "$D/munge/munge.sock" ] && break; sleep 0.1; done
    cpus=$(nproc)
    mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
    ctld=$(free_port)
    slurmd_port=$(free_port)
    while [ "$slurmd_port" = "$ctld" ]; do slurmd_port=$(free_port); done
    cat >"$D/slurm.conf" <<CONF
ClusterName=zcube$$
SlurmctldHost=localhost
SlurmctldPort=$ctld
SlurmdPort=$slurmd_port
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=pmix
MailProg=/bin/true
ReturnToService=2
MinJobAge=300
DependencyParameters=kill_invalid_depend
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
    export SLURM_CONF=$D/slurm.conf
    /usr/sbin/slurmctld -f "$SLURM_CONF"
    /usr/sbin/slurmd -N localhost -f "$SLURM_CONF"
    for _ in $(seq 100); do
        [ "$(sinfo -h -o %t 2>/dev/null)" = idle ] && break
        sleep 0.1
    done
    if [ "$(sinfo -h -o %t 2>/dev/null)" != idle ]; then
        echo "local-slurm: the node did not come up; logs in $D/log" >&2
        ZCUBE_SLURM_DIR=$D "$0" stop >&2 || true
        exit 1
    fi
    echo "export SLURM_CONF=$D/slurm.conf ZCUBE_SLURM_DIR=$D"
    ;;
stop)
    D=${ZCUBE_SLURM_DIR:?set ZCUBE_SLURM_DIR (printed by start)}
    for f in "$D/slurmd.pid" "$D/slurmctld.pid" "$D/munge/munged.pid"; do
        pid=$(pid_of "$f") || continue
        kill "$pid" 2>/dev/null || continue
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    rm -rf "$D"
    ;;
status)
    D=${ZCUBE_SLURM_DIR:?set ZCUBE_SLURM_DIR (printed by start)}
    SLURM_CONF=$D/slurm.conf sinfo
    ;;
*)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
