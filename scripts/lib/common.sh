# Sourced by the scripts under scripts/: where things live, and small helpers.
# shellcheck shell=bash
EDDY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
EDDY_DATA="${EDDY_DATA:-$EDDY_ROOT/.eddy}"
EDDY_LOGS="$EDDY_DATA/logs"
export EDDY_ROOT EDDY_DATA EDDY_LOGS
mkdir -p "$EDDY_LOGS"

log() { printf '[eddy] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# wait_for_port HOST PORT TIMEOUT_S: true once something accepts connections there.
wait_for_port() {
  local host=$1 port=$2 deadline=$(( $(date +%s) + $3 ))
  until (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# pid_alive FILE: true when FILE names a running process.
pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop_pid FILE NAME: SIGTERM, up to 30 s, then SIGKILL.
stop_pid() {
  local file=$1 name=$2 pid
  if ! pid_alive "$file"; then rm -f "$file"; log "$name is not running"; return 0; fi
  pid=$(cat "$file")
  kill "$pid"
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then log "$name did not stop in 30 s; killing it"; kill -9 "$pid"; fi
  rm -f "$file"
  log "$name stopped"
}

# elapsed START_NS: milliseconds since START_NS (from date +%s%N).
elapsed_ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
