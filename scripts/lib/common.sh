# Sourced by the scripts under scripts/: where things live and a few small helpers.
# shellcheck shell=bash
# The repo root is found from this file's location so the scripts work from any working directory.
EDDY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Everything the scripts write (data, logs, generated config) lives here; git-ignored by default.
EDDY_DATA="${EDDY_DATA:-$EDDY_ROOT/.eddy}"
EDDY_LOGS="$EDDY_DATA/logs"
export EDDY_ROOT EDDY_DATA EDDY_LOGS
mkdir -p "$EDDY_LOGS"

# Messages go to stderr so stdout stays usable for values (scripts/infra prints env lines there).
log() { printf '[eddy] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# wait_for_port HOST PORT TIMEOUT_S: succeeds once something accepts TCP connections there.
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
wait_for_port() {
  local deadline=$((SECONDS + $3))
  until port_open "$1" "$2"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# since MS: seconds elapsed since MS (from now_ms), one decimal, for the "ready in" messages.
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
since() { local d=$(( $(now_ms) - $1 )); printf '%d.%d s' $((d / 1000)) $((d % 1000 / 100)); }
