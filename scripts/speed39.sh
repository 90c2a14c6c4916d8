#!/usr/bin/env bash
# Issue 39's speed table: old (52fadce) against new (main), 5 alternating rounds.
set -u
source /work/testenv.sh
OLD=/work/wt-old NEW=/work/main
(cd $OLD && go build -o /tmp/bench-old ./bench/checkout && go test -c -o /tmp/pp-old.test ./bench/) || exit 1
(cd $NEW && go build -o /tmp/bench-new ./bench/checkout && go test -c -o /tmp/pp-new.test ./bench/) || exit 1
DB='mysql:root@tcp(127.0.0.1:3306)/test'
for r in 1 2 3 4 5; do
  if [ $((r % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
  for v in $order; do
    echo "### round $r $v checkout $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    /tmp/bench-$v -db "$DB" -clients 64 -dur 2s -raw=false -only '(hot|16)/(plain|group)/(in-process|http)/64' 2>&1 | grep -E '^\s+(hot|16)\s'
    continue
    d=$OLD; [ $v = new ] && d=$NEW
    (cd $d/bench && STOREFRONT_GQLCEILING_DIR=/work/shared/bench/gqlceiling STOREFRONT_BYTESCEILING_DIR=/work/shared/bench/bytesceiling /tmp/pp-$v.test -test.run '^$' -test.bench 'ResponseCache/page12/cached-post|ProductPage/page12/storefront-bin' -test.benchtime 1s 2>&1 | grep -E '^Benchmark')
  done
done
