#!/bin/bash
# capture.sh LABEL BINARY: run.sh's load (bench/wrkorder) for 3 s with serve behind
# sqlcapture (go build -o /tmp/sqlcapture ./bench/sqlcapture), every query it
# sends logged to $OUT/sql-LABEL.log; batches.py LOG N then prints one batch of
# N orders and the batches' bytes per order.
set -e
HERE=$(cd "$(dirname "$0")/../wrkorder" && pwd)
OUT=${OUT:-/tmp/wrkorder}; mkdir -p $OUT
label=$1 bin=$2
db=batchcap_${label}
port=$((18100 + RANDOM % 800)); pport=$((port+2000))
export STOREFRONT_JWT_SECRET=cpu32-bench-secret-0123456789abcdef
mysql -uroot -h127.0.0.1 -e "drop database if exists $db; create database $db"
${SQLCAPTURE:-/tmp/sqlcapture} 127.0.0.1:$pport 127.0.0.1:3306 $OUT/sql-$label.log & ppid=$!
sleep 0.3
$bin serve --demo --db "mysql:root@tcp(127.0.0.1:$pport)/$db" --addr 127.0.0.1:$port --outbox-interval 1s > $OUT/serve-$label.log 2>&1 &
spid=$!
for i in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:$port/healthz && break; sleep 0.1; done
admin=$(grep "demo admin token" $OUT/serve-$label.log | awk '{print $4}')
hot=$(mysql -uroot -h127.0.0.1 -N $db -e "select id from sku where goods_id=1 and spec_value_str='黑色,L'")
curl -s -H 'Content-Type: application/json' -H "Authorization: Bearer $admin" http://127.0.0.1:$port/graphql \
  -d "{\"query\":\"mutation { adjustStock(input:{itemId: \\\"$hot\\\", delta: 100000000, reason: \\\"bench\\\"}) { stock } }\"}" > $OUT/adj-$label.json
export BODY="{\"query\":\"mutation(\$id: ID!) { placeOrder(input: {items: [{itemId: \$id, quantity: 1}]}) { orderSn amount } }\",\"variables\":{\"id\":\"$hot\"}}"
export TOKENS=$OUT/tokens.txt
RUN=c$label wrk -t2 -c64 -d3s -s $HERE/place.lua http://127.0.0.1:$port/ > $OUT/wrkcap-$label.txt
sleep 1.5
o1=$(mysql -uroot -h127.0.0.1 -N $db -e "select count(*) from orders")
echo orders=$o1
kill $spid; wait $spid 2>/dev/null || true
kill $ppid; wait $ppid 2>/dev/null || true
mysql -uroot -h127.0.0.1 -e "drop database if exists $db"
