#!/bin/bash
# rounds.sh N BODY PID@ADDR...: N interleaved rounds of wrk -t2 -c32 -d6s
# POSTing BODY to each server's /graphql, with each server's CPU time per
# request (user + system, and user alone) read from /proc around its run:
# on a shared machine requests per second swing far more than CPU per
# request does. PID is the server's process (e.g. bytesceiling's).
set -eu
n=$1; body=$2; shift 2
lua=$(mktemp --suffix .lua); trap 'rm -f "$lua"' EXIT
cat > "$lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$body"); wrk.body = f:read("*a"); f:close()
LUA
tck=$(getconf CLK_TCK)
ticks() { awk -v f="$2" '{print (f == "user") ? $14 : $14 + $15}' "/proc/$1/stat"; }
for i in $(seq "$n"); do
  for pa in "$@"; do
    pid=${pa%@*}; addr=${pa#*@}
    c0=$(ticks "$pid" all); u0=$(ticks "$pid" user)
    out=$(wrk -t2 -c32 -d6s -s "$lua" "http://$addr/graphql")
    c1=$(ticks "$pid" all); u1=$(ticks "$pid" user)
    reqs=$(echo "$out" | awk '/requests in/{print $1}')
    echo "round $i $addr req/s $(echo "$out" | awk '/Requests\/sec/{print $2}')" \
      "cpu_us/req $(echo "scale=2; ($c1-$c0)*1000000/$tck/$reqs" | bc)" \
      "user_us/req $(echo "scale=2; ($u1-$u0)*1000000/$tck/$reqs" | bc)" \
      "non-2xx $(echo "$out" | awk '/Non-2xx/{print $NF}')"
  done
done
