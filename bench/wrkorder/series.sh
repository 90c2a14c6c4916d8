#!/bin/bash
# series.sh N A=BINARY B=BINARY ...: N rounds of run.sh over the binaries,
# the order rotating each round, so that the machine's drift weighs on all.
# The label raw takes ../shared/bench/hotrow's binary instead: its raw CAS
# (-mode=raw -c=64 -dur=6s) on a database of its own, in the same rotation.
n=$1; shift
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/proc.sh"
uptime
for i in $(seq "$n"); do
  set -- "${@:2}" "$1" # rotate
  for lb in "$@"; do
    l=${lb%%=*} b=${lb#*=}
    if [ "$l" = raw ]; then
      mysql -uroot -h127.0.0.1 -e "drop database if exists hr_raw; create database hr_raw"
      b0=$(busy); x0=$(steal); t0=$(date +%s.%N)
      r=$($b -dsn 'root@tcp(127.0.0.1:3306)/hr_raw?interpolateParams=true' -mode=raw -c=64 -dur=6s 2>&1 | grep -o 'ops/s= *[0-9.]*' | tr -d ' ')
      b1=$(busy); x1=$(steal); t1=$(date +%s.%N)
      # The machine's busy CPU per operation, roughly: over hotrow's whole
      # run (its setup too), per its measured ops/s times the run's time.
      ops=$(awk -v r=${r#ops/s=} -v t0=$t0 -v t1=$t1 'BEGIN{printf "%.0f", r*(t1-t0)}')
      echo "raw s$i $r machine_us/op~$(perop $((b1-b0)) $ops) steal_us/op~$(perop $((x1-x0)) $ops) load=$(cut -d' ' -f1 /proc/loadavg)"
      mysql -uroot -h127.0.0.1 -e "drop database if exists hr_raw"
    else
      "$HERE/run.sh" "$l" "$b" "s$i" 2>&1 | tail -2
    fi
  done
done
uptime
