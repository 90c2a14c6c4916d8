#!/bin/bash
# series.sh N A=BINARY B=BINARY ...: N rounds of run.sh over the binaries,
# the order rotating each round, so that the machine's drift weighs on all.
n=$1; shift
HERE=$(cd "$(dirname "$0")" && pwd)
uptime
for i in $(seq "$n"); do
  set -- "${@:2}" "$1" # rotate
  for lb in "$@"; do
    "$HERE/run.sh" "${lb%%=*}" "${lb#*=}" "s$i" 2>&1 | tail -2
  done
done
uptime
