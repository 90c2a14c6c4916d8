#!/bin/bash
# Runs one bench/wsflood flood against a fresh `serve --demo` (SQLite) and
# prints its report and the memory limit the server logged.
# N sets the connections (9000), WSFLOOD the flood binary (default: go run
# ./bench/wsflood). Only ever on 127.0.0.1.
# usage: bench/wsflood/flood.sh BINARY LABEL [extra serve flags...]
bin=$1; label=$2; shift 2
db=${TMPDIR:-/tmp}/wsflood-$label.db; rm -f $db*
port=$((19000 + RANDOM % 1000))
$bin serve --demo --db sqlite:$db --addr 127.0.0.1:$port "$@" >${TMPDIR:-/tmp}/wsflood-$label.out 2>&1 &
pid=$!
for i in $(seq 100); do curl -sf http://127.0.0.1:$port/readyz >/dev/null && break; sleep 0.1; done
echo "== $label flags=$* load: $(cut -d' ' -f1-3 /proc/loadavg)"
${WSFLOOD:-go run ./bench/wsflood} -url http://127.0.0.1:$port -pid $pid -conns ${N:-9000} -addrs 3
grep -o '"memory_limit":[0-9]*\|"live_max_conns":[0-9]*' ${TMPDIR:-/tmp}/wsflood-$label.out
kill $pid; wait $pid 2>/dev/null
