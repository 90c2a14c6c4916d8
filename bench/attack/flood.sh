#!/bin/bash
# Runs one flood of bench/attack against a fresh `serve --demo` (SQLite) and
# prints the attack's report, the server's VmRSS sampled max and VmHWM.
# D sets the duration (25s), PRE a command prefix (e.g. "env GOMEMLIMIT=off"),
# ATTACK the attack binary (default: go run ./bench/attack). Only ever on 127.0.0.1.
# usage: bench/attack/flood.sh BINARY LABEL ATTACK [extra serve flags...]
bin=$1; label=$2; attack=$3; shift 3
db=${TMPDIR:-/tmp}/flood-$label.db; rm -f $db*
port=$((18000 + RANDOM % 1000))
$PRE $bin serve --demo --db sqlite:$db --addr 127.0.0.1:$port "$@" >${TMPDIR:-/tmp}/flood-$label.out 2>&1 &
pid=$!
for i in $(seq 100); do curl -sf http://127.0.0.1:$port/readyz >/dev/null && break; sleep 0.1; done
echo "== $label attack=$attack flags=$* load: $(cut -d' ' -f1-3 /proc/loadavg)"
${ATTACK:-go run ./bench/attack} -url http://127.0.0.1:$port -pid $pid -attack $attack -c 32 -d ${D:-25s} -probe-every 1s
kill $pid; wait $pid 2>/dev/null
