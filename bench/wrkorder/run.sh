#!/bin/bash
# run.sh LABEL BINARY IDX [PROFILE_FILE]: placeOrder of the hot SKU over HTTP
# (docs/benchmarks.md, "CPU per order (issue 32)"). One fresh MariaDB
# database, BINARY serve --demo on it, 100,000,000 units booked on the hot SKU
# (T-shirt 黑色/L), wrk -t2 -c64 for 1 s of warm-up and 6 s measured. Prints
# orders/s and the CPU µs per order of serve and of mariadbd (from
# /proc/PID/stat over the measured 6 s), of wrk and of the whole machine, and
# MariaDB's bytes received and sent and statements per order (global status:
# other clients of the server count too). With PROFILE_FILE, a 5 s CPU
# profile of serve is taken meanwhile (BINARY built with -tags pprof).
#
# Needs wrk, curl, the mysql client and $OUT/tokens.txt (customer tokens, one
# a line, signed with the secret below):
#   export STOREFRONT_JWT_SECRET=cpu32-bench-secret-0123456789abcdef
#   for i in $(seq 256); do storefront token --sub bench-$i --role customer --ttl 24h; done > $OUT/tokens.txt
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/wrkorder}
mkdir -p "$OUT"
label=$1 bin=$2 idx=$3 prof=$4
db=cpu_${label}_$idx
port=$((18100 + RANDOM % 800))
export STOREFRONT_JWT_SECRET=cpu32-bench-secret-0123456789abcdef
mysql -uroot -h127.0.0.1 -e "drop database if exists $db; create database $db"
STOREFRONT_PPROF_ADDR=127.0.0.1:$((port+1000)) $bin serve --demo --db "mysql:root@tcp(127.0.0.1:3306)/$db" --addr 127.0.0.1:$port --outbox-interval 1s > $OUT/serve-$label-$idx.log 2>&1 &
spid=$!
for i in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:$port/healthz && break; sleep 0.1; done
admin=$(grep "demo admin token" $OUT/serve-$label-$idx.log | awk '{print $4}')
hot=$(mysql -uroot -h127.0.0.1 -N $db -e "select id from sku where goods_id=1 and spec_value_str='黑色,L'")
curl -s -H 'Content-Type: application/json' -H "Authorization: Bearer $admin" http://127.0.0.1:$port/graphql \
  -d "{\"query\":\"mutation { adjustStock(input:{itemId: \\\"$hot\\\", delta: 100000000, reason: \\\"bench\\\"}) { stock } }\"}" > $OUT/adj-$label-$idx.json
grep -q 100000 $OUT/adj-$label-$idx.json || { cat $OUT/adj-$label-$idx.json; kill $spid; exit 1; }
export BODY="{\"query\":\"mutation(\$id: ID!) { placeOrder(input: {items: [{itemId: \$id, quantity: 1}]}) { orderSn amount } }\",\"variables\":{\"id\":\"$hot\"}}"
export TOKENS=$OUT/tokens.txt
RUN=w$label$idx wrk -t2 -c64 -d1s -s $HERE/place.lua http://127.0.0.1:$port/ > /dev/null
# The server on 3306 (other mariadbd may run beside it: a Galera cluster's nodes).
mpid=${MARIADB_PID:-$(ss -ltnpH 'sport = :3306' | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)}
. "$HERE/proc.sh"
# wrk's own CPU: this shell's waited-for children (cutime + cstime), of
# which the measured wrk is all but a few milliseconds.
kids() { awk '{print $16+$17}' /proc/$$/stat; }
o0=$(mysql -uroot -h127.0.0.1 -N $db -e "select count(*) from orders"); st0=$(mysql -uroot -h127.0.0.1 -N -e "show global status where variable_name in ('Bytes_received','Bytes_sent','Questions')" | awk '{printf "%s ", $2}')
g0=$(ticks $spid); m0=$(ticks $mpid); w0=$(kids); b0=$(busy); x0=$(steal); t0=$(date +%s.%N)
if [ -n "$prof" ]; then curl -s -o $prof "http://127.0.0.1:$((port+1000))/debug/pprof/profile?seconds=5" & cpid=$!; fi
RUN=m$label$idx wrk -t2 -c64 -d6s -s $HERE/place.lua http://127.0.0.1:$port/ > $OUT/wrk-$label-$idx.txt
g1=$(ticks $spid); m1=$(ticks $mpid); w1=$(kids); b1=$(busy); x1=$(steal); t1=$(date +%s.%N)
[ -n "$prof" ] && wait $cpid
o1=$(mysql -uroot -h127.0.0.1 -N $db -e "select count(*) from orders"); st1=$(mysql -uroot -h127.0.0.1 -N -e "show global status where variable_name in ('Bytes_received','Bytes_sent','Questions')" | awk '{printf "%s ", $2}')
kill $spid; wait $spid 2>/dev/null || true
mysql -uroot -h127.0.0.1 -e "drop database if exists $db"
n=$((o1-o0)); bad=$(grep BAD $OUT/wrk-$label-$idx.txt | awk '{print $2}')
awk -v l=$label -v i=$idx -v n=$n -v g=$((g1-g0)) -v m=$((m1-m0)) -v t0=$t0 -v t1=$t1 -v bad=$bad -v la="$(cut -d' ' -f1 /proc/loadavg)" \
  -v w=$((w1-w0)) -v b=$((b1-b0)) -v x=$((x1-x0)) \
  'BEGIN{printf "%s %s orders=%d orders/s=%.0f go_us/order=%.1f db_us/order=%.1f wrk_us/order=%.1f machine_us/order=%.1f steal_us/order=%.1f bad=%s load=%s\n", l, i, n, n/(t1-t0), g*10000/n, m*10000/n, w*10000/n, b*10000/n, x*10000/n, bad, la}'
read r0 s0 q0 <<< "$st0"; read r1 s1 q1 <<< "$st1"
awk -v n=$n -v r=$((r1-r0)) -v s=$((s1-s0)) -v q=$((q1-q0)) 'BEGIN{printf "   db bytes received/order=%.0f sent/order=%.0f statements/order=%.3f\n", r/n, s/n, q/n}'
