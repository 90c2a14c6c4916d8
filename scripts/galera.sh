#!/usr/bin/env bash
# A three-node MariaDB Galera cluster on loopback, for the galera tests and
# benchmarks (docs/operations.md, "MariaDB Galera").
#
#   scripts/galera.sh up     [DIR]   start nodes 1..3, wait for a Synced cluster of 3
#   scripts/galera.sh down   [DIR]   stop exactly the processes `up` started
#   scripts/galera.sh status [DIR]   each node's size, state and readiness
#
# DIR defaults to ./data/galera (gitignored). Node N listens on 127.0.0.1:331N
# (clients: root, no password, database test), Galera 457N, IST 458N and rsync
# SST 459N. Nothing listens outside loopback. The machine's own MariaDB (3306)
# is not touched: every node reads only its own my.cnf (--defaults-file).
set -euo pipefail

cmd=${1:-}
DIR=${2:-./data/galera}
NODES=(1 2 3)
PROVIDER=/usr/lib/galera/libgalera_smm.so
MARIADBD=/usr/sbin/mariadbd
UP_TIMEOUT=${GALERA_UP_TIMEOUT:-120} # seconds for each node to reach Synced

die() { echo "galera.sh: $*" >&2; exit 1; }
port() { echo $((3310 + $1)); }
ndir() { echo "$DIR/node$1"; }

sql() { # sql N 'statement' → tab-separated rows, no header
  mariadb -uroot -h127.0.0.1 -P"$(port "$1")" --connect-timeout=2 -N -B -e "$2" 2>/dev/null
}

# status N → "size state ready" ("" when the node does not answer).
node_status() {
  sql "$1" "SELECT MAX(IF(VARIABLE_NAME='WSREP_CLUSTER_SIZE',VARIABLE_VALUE,NULL)),
                   MAX(IF(VARIABLE_NAME='WSREP_LOCAL_STATE_COMMENT',VARIABLE_VALUE,NULL)),
                   MAX(IF(VARIABLE_NAME='WSREP_READY',VARIABLE_VALUE,NULL))
            FROM information_schema.GLOBAL_STATUS" | tr '\t' ' ' || true
}

alive() { # alive N: the pid in its pid file is this node's mariadbd
  local pidf pid
  pidf="$(ndir "$1")/galera.pid"
  [ -f "$pidf" ] || return 1
  pid=$(cat "$pidf")
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "--defaults-file=$(ndir "$1")/my.cnf"
}

install_packages() {
  [ -x "$MARIADBD" ] && [ -f "$PROVIDER" ] && command -v rsync >/dev/null && return
  [ "$(id -u)" = 0 ] || die "mariadb-server, galera-4 and rsync are missing; install them as root"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server galera-4 rsync
}

write_cnf() { # write_cnf N
  local n=$1 d
  d=$(ndir "$n")
  cat >"$d/my.cnf" <<EOF
# Node $n of scripts/galera.sh. Read alone (--defaults-file): nothing of /etc/mysql.
[mariadbd]
user                     = mysql
datadir                  = $d/data
socket                   = $d/mariadbd.sock
pid-file                 = $d/mariadbd.pid
log-error                = $d/error.log
bind-address             = 127.0.0.1
port                     = $(port "$n")
skip-name-resolve
max_connections          = 500
# Galera replicates InnoDB rows: row events, and interleaved auto-increment
# locks (a statement's ids are assigned as rows are, not under a table lock).
binlog_format            = ROW
default_storage_engine   = InnoDB
innodb_autoinc_lock_mode = 2
innodb_buffer_pool_size  = 128M
# A committed write set is on every node's memory before COMMIT returns: the
# cluster is the durability, the local log is flushed once a second.
innodb_flush_log_at_trx_commit = 2
wsrep_on                 = ON
wsrep_provider           = $PROVIDER
wsrep_cluster_name       = storefront_galera
wsrep_cluster_address    = gcomm://127.0.0.1:4571,127.0.0.1:4572,127.0.0.1:4573
wsrep_node_name          = node$n
wsrep_node_address       = 127.0.0.1:$((4570 + n))
wsrep_provider_options   = "gmcast.listen_addr=tcp://127.0.0.1:$((4570 + n));ist.recv_addr=127.0.0.1:$((4580 + n));gcache.size=256M"
wsrep_sst_method         = rsync
wsrep_sst_receive_address = 127.0.0.1:$((4590 + n))
wsrep_slave_threads      = 2
EOF
}

logs() {
  for n in "${NODES[@]}"; do
    echo "----- node $n: $(ndir "$n")/error.log (last 40 lines)" >&2
    tail -n 40 "$(ndir "$n")/error.log" >&2 2>/dev/null || true
  done
}

start_node() { # start_node N [--wsrep-new-cluster]
  local n=$1 d
  shift
  d=$(ndir "$n")
  if alive "$n"; then
    echo "node $n already running (pid $(cat "$d/galera.pid"))"
    return
  fi
  # The node runs as mysql: rsync SST's daemon on a joiner drops to the
  # user mariadbd runs as (to nobody when that is root, which then cannot
  # write the joiner's datadir), so every file of a node is mysql's.
  chown -R mysql:mysql "$d"
  # setsid: the node outlives the shell that started it. The pid file is
  # written by the process that becomes mariadbd (exec), so `down` stops
  # exactly it.
  setsid bash -c 'echo $$ >"$1/galera.pid"; shift; exec "$@"' _ "$d" \
    "$MARIADBD" --defaults-file="$d/my.cnf" "$@" </dev/null >>"$d/stdout.log" 2>&1 &
  echo "node $n starting on 127.0.0.1:$(port "$n")"
}

wait_synced() { # wait_synced N SIZE: the node is Synced, ready, in a cluster of SIZE
  local n=$1 want=$2 s
  for _ in $(seq 1 "$UP_TIMEOUT"); do
    s=$(node_status "$n")
    if [ "$s" = "$want Synced ON" ]; then
      echo "node $n: cluster size $want, Synced, ready"
      return 0
    fi
    if [ -f "$(ndir "$n")/galera.pid" ] && ! alive "$n"; then
      echo "galera.sh: node $n exited" >&2
      logs
      return 1
    fi
    sleep 1
  done
  echo "galera.sh: node $n not Synced in a cluster of $want after ${UP_TIMEOUT}s (now: ${s:-no answer})" >&2
  logs
  return 1
}

up() {
  install_packages
  id mysql >/dev/null 2>&1 || die "no user mysql (the mariadb-server package creates it)"
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd)
  # The nodes run as mysql, which must reach its datadirs through DIR (a
  # mktemp -d directory is 0700).
  chmod o+x "$DIR"
  for n in "${NODES[@]}"; do
    mkdir -p "$(ndir "$n")/data"
    write_cnf "$n"
  done
  local d1
  d1=$(ndir 1)
  if [ ! -d "$d1/data/mysql" ]; then
    # Only the first node is installed; the joiners receive its datadir by SST.
    chown -R mysql:mysql "$d1"
    mariadb-install-db --defaults-file="$d1/my.cnf" --user=mysql \
      --auth-root-authentication-method=normal --skip-test-db >"$d1/install.log" 2>&1 ||
      { cat "$d1/install.log" >&2; die "mariadb-install-db failed"; }
  fi
  if ! alive 1; then
    # `down` stops node 1 last, so it holds the newest state: it may start
    # the cluster again even when Galera marked it unsafe to.
    [ -f "$d1/data/grastate.dat" ] && sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$d1/data/grastate.dat"
    start_node 1 --wsrep-new-cluster
  fi
  wait_synced 1 1 || wait_synced 1 3 || { down_quiet; exit 1; }
  # root over TCP with no password, and the tests' database (replicated).
  sql 1 "CREATE USER IF NOT EXISTS root@'127.0.0.1'; GRANT ALL ON *.* TO root@'127.0.0.1' WITH GRANT OPTION;
         CREATE DATABASE IF NOT EXISTS test CHARACTER SET utf8mb4" ||
    mariadb --defaults-file="$d1/my.cnf" -uroot -S "$d1/mariadbd.sock" -e \
      "CREATE USER IF NOT EXISTS root@'127.0.0.1'; GRANT ALL ON *.* TO root@'127.0.0.1' WITH GRANT OPTION; CREATE DATABASE IF NOT EXISTS test CHARACTER SET utf8mb4"
  # One joiner at a time: an rsync donor is blocked while it sends.
  start_node 2
  wait_synced 2 2 || wait_synced 2 3 || { down_quiet; exit 1; }
  start_node 3
  wait_synced 3 3 || { down_quiet; exit 1; }
  for n in "${NODES[@]}"; do
    [ "$(node_status "$n")" = "3 Synced ON" ] || { echo "galera.sh: node $n left the cluster" >&2; logs; down_quiet; exit 1; }
  done
  echo "galera: 3 nodes Synced on 127.0.0.1:3311-3313 (DSN root@tcp(127.0.0.1:3311)/test ...)"
}

stop_node() { # stop_node N: TERM the pid `up` recorded, wait for it to end
  local n=$1 pid d
  d=$(ndir "$n")
  if ! alive "$n"; then
    rm -f "$d/galera.pid"
    return
  fi
  pid=$(cat "$d/galera.pid")
  kill -TERM "$pid"
  for _ in $(seq 1 60); do
    [ -d "/proc/$pid" ] || break
    sleep 1
  done
  if [ -d "/proc/$pid" ]; then
    echo "galera.sh: node $n (pid $pid) did not stop in 60s: killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$d/galera.pid"
  echo "node $n stopped"
}

down_quiet() { for n in 3 2 1; do stop_node "$n" >/dev/null 2>&1 || true; done; }

down() {
  [ -d "$DIR" ] || return 0
  DIR=$(cd "$DIR" && pwd)
  # Node 1 last: the last node to leave is the one safe to bootstrap from.
  for n in 3 2 1; do stop_node "$n"; done
}

status() {
  [ -d "$DIR" ] || die "no cluster in $DIR"
  DIR=$(cd "$DIR" && pwd)
  local bad=0 s
  for n in "${NODES[@]}"; do
    if alive "$n"; then
      s=$(node_status "$n")
      echo "node $n: pid $(cat "$(ndir "$n")/galera.pid"), 127.0.0.1:$(port "$n"), size/state/ready: ${s:-no answer}"
      [ "$s" = "3 Synced ON" ] || bad=1
    else
      echo "node $n: not running"
      bad=1
    fi
  done
  return $bad
}

case "$cmd" in
up) up ;;
down) down ;;
status) status ;;
*) die "usage: scripts/galera.sh up|down|status [DIR]" ;;
esac
