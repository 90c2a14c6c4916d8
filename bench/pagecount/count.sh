#!/bin/sh
# count.sh BINARY [N] [pagecount flags...]: the instructions `BINARY serve
# --demo` (SQLite, response cache on) spends on N (10000) cached product-page
# POSTs, counted by callgrind from after a warm-up to after the last answer,
# so start-up and shutdown are not in the figure. Under callgrind the run
# takes seconds of wall time, so the loops that run by the clock (stock
# revalidation, the closer, the outbox, the sweeps) are set to an hour:
# their work is per second, not per request, and would swing the count with
# the machine's speed; what still runs by the clock is counted as long
# again with no requests and subtracted. Prints instructions per request; the profile stays in
# $OUT (default /tmp/pagecount), for callgrind_annotate. EXTRA adds serve flags.
set -eu
bin=$1; n=${2:-10000}; shift; [ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/pagecount}
addr=127.0.0.1:${PORT:-18181}
mkdir -p "$out"; rm -f "$out"/callgrind.out.* "$out/db"
(cd "$here" && go build -o "$out/pagecount" .)
# The demo T-shirt with its first colour selected, as bench/respcache's page.
cat > "$out/page.json" <<'JSON'
{"query":"query($id: ID!, $sel: [ID!]) { goods(id: $id) { id name specs { id name values { id name } } skus { id specValueIds sellPrice stock status } priceRange { min max } totalStock selectable(selected: $sel) { specValueId selectable } } }","variables":{"id":"1","sel":["1"]}}
JSON
# Go's asynchronous preemption signals abort callgrind.
GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --compress-strings=no --compress-pos=no \
  --callgrind-out-file="$out/callgrind.out.%p" "$bin" serve --demo --addr "$addr" --db "sqlite:$out/db" \
  --stock-ttl 1h --close-interval 1h --outbox-interval 1h --reconcile-interval 1h --refund-interval 1h ${EXTRA:-} >"$out/serve.log" 2>&1 &
vg=$!
trap 'kill $vg 2>/dev/null || true' EXIT
until curl -fs "http://$addr/healthz" >/dev/null 2>&1; do sleep 1; done
"$out/pagecount" -addr "$addr" -body "$out/page.json" -n 200 "$@" >/dev/null # fills the cache, warms the pools
sleep "${SETTLE:-10}" # the loops' first passes, at start, are not the requests'
callgrind_control -z "$vg" >/dev/null 2>&1 # counts from here
t0=$(date +%s.%N)
"$out/pagecount" -addr "$addr" -body "$out/page.json" -n "$n" "$@" >/dev/null
t1=$(date +%s.%N)
callgrind_control -d "$vg" >/dev/null 2>&1
# The loops that still run by the clock (the webhooks' pass every second):
# as long again without requests, subtracted.
sleep "$(echo "$t1 - $t0" | bc)"
callgrind_control -d "$vg" >/dev/null 2>&1
total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",","",$1); print $1; exit}'; }
busy=$(total "$out/callgrind.out.$vg.1"); idle=$(total "$out/callgrind.out.$vg.2")
echo "$((busy - idle)) instructions for $n requests: $(((busy - idle) / n)) per request (busy $busy, idle $idle over $(echo "$t1 - $t0" | bc) s; $out/callgrind.out.$vg.1)"
