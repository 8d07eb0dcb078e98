# Sourced by the scripts under scripts/: where things live and a few small helpers.
# shellcheck shell=bash
# The repo root is found from this file's location so the scripts work from any working directory.
EDDY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Everything the scripts write (data, logs, generated config) lives here; git-ignored by default.
EDDY_DATA="${EDDY_DATA:-$EDDY_ROOT/.eddy}"
EDDY_LOGS="$EDDY_DATA/logs"
export EDDY_ROOT EDDY_DATA EDDY_LOGS
mkdir -p "$EDDY_LOGS"
# Every JVM these scripts start (Eddy, Kafka, the tests) allocates RocksDB's and Netty's native memory through
# glibc's malloc, which gives each busy thread its own 64 MB arena and returns little of it: under the soak, Eddy's
# resident size kept growing past 3 GB with RocksDB itself bounded at 256 MiB; with two arenas it levelled off near
# 1.9 GB (benchmarks/README.md, "Memory"). An operator's own setting wins.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"

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

# ensure_jar: builds http-gateway/target/eddy.jar when it is missing or older than the sources; prints its path.
ensure_jar() {
  local jar="$EDDY_ROOT/http-gateway/target/eddy.jar"
  if [ ! -f "$jar" ] || [ -n "$(cd "$EDDY_ROOT" && find pom.xml config state-stores streams-topology query-engine http-gateway \
          \( -name pom.xml -o -path '*/src/main/*' \) -not -path '*/node_modules/*' -type f -newer "$jar" -print -quit)" ]; then
    require_node
    log "building eddy.jar (the first time takes a few minutes: Maven downloads the dependencies)"
    # Only the modules the jar is made of (not the benchmarks and their DuckDB); one line per module built, and
    # a line per 50 files downloaded, so a first build is not minutes of silence.
    (set -o pipefail; cd "$EDDY_ROOT" && mvn -B -DskipTests -pl http-gateway -am package 2>&1 \
      | awk '/^\[INFO\] Building Eddy/ { line = substr($0, 8); gsub(/  +/, " ", line); print "[eddy]   " line; fflush() }
             /^\[INFO\] Downloaded from/ { if (++n % 50 == 0) { print "[eddy]   " n " files downloaded"; fflush() } }
             /ERROR|BUILD FAILURE/ { print; fflush() }') >&2 || die "the build of eddy.jar failed (above)"
  fi
  echo "$jar"
}

# load_keys: the project key, personal key and internal secret of this machine's Eddy, generated once into
# $EDDY_DATA/keys.env and kept, so every start prints the same keys and every local instance shares the secret.
# Values already in the environment win over the kept ones.
load_keys() {
  local keys="$EDDY_DATA/keys.env"
  rand() { LC_ALL=C tr -dc 'A-Za-z0-9' </dev/urandom | head -c "$1"; }
  (
    umask 077
    [ -f "$keys" ] || printf 'EDDY_BOOTSTRAP_PROJECT_TOKEN=phc_%s\nEDDY_BOOTSTRAP_PERSONAL_API_KEY=phx_%s\n' "$(rand 43)" "$(rand 47)" > "$keys"
    # Added for instances started by scripts/scale (older key files lack it).
    grep -q '^EDDY_HTTP_INTERNAL_SECRET=' "$keys" || printf 'EDDY_HTTP_INTERNAL_SECRET=%s\n' "$(rand 40)" >> "$keys"
  )
  local name value
  while IFS='=' read -r name value; do
    [ -n "${!name:-}" ] || export "$name=$value"
  done < "$keys"
}

# local_infra: starts the local Kafka broker and PostgreSQL unless EDDY_KAFKA_BOOTSTRAP / EDDY_PG_URL point
# elsewhere, and exports where they are.
local_infra() {
  if [ -z "${EDDY_KAFKA_BOOTSTRAP:-}" ]; then
    "$EDDY_ROOT/scripts/kafka" start
    export EDDY_KAFKA_BOOTSTRAP="127.0.0.1:${EDDY_KAFKA_PORT:-9092}"
  fi
  if [ -z "${EDDY_PG_URL:-}" ]; then
    "$EDDY_ROOT/scripts/postgres" start
    # The PostgreSQL script records the URL, user and password it set up (the port differs in embedded mode).
    set -a; source "$EDDY_DATA/postgres.env"; set +a
  fi
}

# ensure_chromium: Debian's chromium at /usr/bin/chromium, which the browser test (SharedDashboardBrowserIT) drives
# through playwright-core. Installed with apt when missing (through sudo when not root; the package lists are
# refreshed first when apt does not know the package yet). Never a browser download of a test tool's own.
ensure_chromium() {
  [ -x /usr/bin/chromium ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "/usr/bin/chromium is missing; install Debian's chromium as root (apt-get install chromium)"
    sudo=(sudo)
  fi
  log "installing Debian's chromium for the browser test (output in $EDDY_LOGS/apt-chromium.log)"
  {
    apt-cache show chromium >/dev/null 2>&1 || "${sudo[@]}" apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
  } >"$EDDY_LOGS/apt-chromium.log" 2>&1 || die "could not install chromium (see $EDDY_LOGS/apt-chromium.log)"
  [ -x /usr/bin/chromium ] || die "the chromium package is installed but /usr/bin/chromium is not there"
}

# require_node: the build bundles the shared dashboard page with the machine's node and npm (Maven calls npm ci and
# npm run build in http-gateway/src/main/web).
require_node() {
  command -v node >/dev/null && command -v npm >/dev/null \
    || die "node and npm are needed to build the shared dashboard page (Debian: apt-get install nodejs npm)"
}

# await_http PID LOG URL [TIMEOUT_S]: waits until URL answers 2xx; dies when process PID exits first (pointing at
# its LOG) or after TIMEOUT_S (120).
await_http() {
  local pid="$1" logfile="$2" url="$3" timeout="${4:-120}"
  local deadline=$((SECONDS + timeout))
  until curl -sf -m 2 "$url" >/dev/null; do
    kill -0 "$pid" 2>/dev/null || die "process $pid exited; see $logfile"
    [ "$SECONDS" -lt "$deadline" ] || die "$url not answering after $timeout s; see $logfile"
    sleep 0.5
  done
}

# stop_pid PID [NAME]: stops the process gracefully (SIGTERM: an Eddy leaves its group, so its partitions move at
# once), SIGKILL after 60 s; returns once it is gone. Nothing happens when it is not running.
stop_pid() {
  local pid="$1" name="${2:-process $1}"
  kill "$pid" 2>/dev/null || return 0
  local deadline=$((SECONDS + 60))
  while kill -0 "$pid" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || { log "$name did not stop in 60 s; killing it"; kill -9 "$pid" 2>/dev/null || true; }
    sleep 0.5
  done
}

# bench_db NAME: a database of its own for a benchmark, new each run, so its projects, flags and keys never mix with
# the development database's: starts PostgreSQL if needed, (re)creates NAME and exports EDDY_PG_* for it.
# drop_bench_db drops it again (from the benchmark's exit trap).
bench_db() {
  export EDDY_PG_DB="$1" EDDY_PG_ENVFILE="$EDDY_DATA/postgres-$1.env"
  "$EDDY_ROOT/scripts/postgres" start
  set -a; source "$EDDY_PG_ENVFILE"; set +a
  drop_bench_db
  "$EDDY_ROOT/scripts/postgres" start
}
drop_bench_db() {
  PGPASSWORD="$EDDY_PG_PASSWORD" psql -X -q -h 127.0.0.1 -p "$(sed 's|.*:\([0-9]*\)/.*|\1|' <<<"$EDDY_PG_URL")" \
    -U "$EDDY_PG_USER" -d postgres -c "DROP DATABASE IF EXISTS $EDDY_PG_DB"
}
