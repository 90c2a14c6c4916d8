#!/bin/bash
# callgrind.sh COMMIT [WORKLOAD…]: count what COMMIT's service costs, with
# callgrind's instruction counts, which do not move with whatever else the
# machine runs (docs/benchmarks.md, "Counting instructions"). Workloads:
#
#   plain    instructions per order, placeOrder on the plain path, in process
#   group    instructions per order, the group path in batches of exactly $BATCH
#   page     instructions per request, the cached product page through the
#            binary (storefront serve --demo), from bench/pageclient
#   ceiling  instructions per request of ../shared/bench/bytesceiling answering
#            the page's bytes, the page's limit ($BYTESCEILING)
#   dbcpu    the database's CPU per order of plain and group, natively
#            ($ROUNDS rounds of $DBN orders; bench/count/dbcpu.go)
#
# Default: plain group dbcpu. It checks COMMIT out into a temporary worktree
# (git worktree add --detach; removed at the end), copies this tree's
# bench/count and the hook it calls (internal/checkout/fixedbatch.go) in where
# they are missing, builds there, and runs each workload under
#   GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --instr-atstart=no
# (without asyncpreemptoff callgrind aborts on Go's preemption signal). The
# instrumentation is switched on (callgrind_control -i on) once the workload
# is set up and warm, and off when its fixed count is done, so the total is
# the measured loop's alone; it prints that total over the orders or requests.
# Only the Go process is counted: the database (MariaDB at $DB) is another.
# Keeps the callgrind files in $OUT for callgrind_annotate.
#
#   scripts/callgrind.sh 3011f1b
#   N=10000 scripts/callgrind.sh bdb413a page ceiling
set -euo pipefail
commit=${1:?usage: callgrind.sh COMMIT [plain|group|page|ceiling|dbcpu …]}
shift
workloads=${*:-plain group dbcpu}
here=$(cd "$(dirname "$0")/.." && pwd)
DB=${DB:-mysql:root@tcp(127.0.0.1:3306)/test}
BATCH=${BATCH:-32}
ROUNDS=${ROUNDS:-3}
DBN=${DBN:-6400}
BYTESCEILING=${BYTESCEILING:-$here/../shared/bench/bytesceiling}
sha=$(git -C "$here" rev-parse --short "$commit")
OUT=${OUT:-/tmp/callgrind}/$sha
mkdir -p "$OUT"
tree=$(mktemp -d /tmp/callgrind-tree.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	git -C "$here" worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
}
trap cleanup EXIT
git -C "$here" worktree add --detach --quiet "$tree" "$sha"
# -trimpath: the same sources build to the same cached packages in every
# worktree, and callgrind_annotate names files alike at every commit.
build() { (cd "$1" && go build -trimpath -o "$OUT/$2" "./$3"); }
case " $workloads " in *" plain "* | *" group "* | *" dbcpu "*)
	for f in bench/count internal/checkout/fixedbatch.go; do
		[ -e "$tree/$f" ] || cp -r "$here/$f" "$tree/$f"
	done
	build "$tree" count bench/count ;;
esac
case " $workloads " in *" page "* | *" ceiling "*)
	build "$tree" storefront cmd/storefront
	build "$here" pageclient bench/pageclient ;;
esac

# gated LABEL CMD…: CMD prints "ready" when set up and warm and waits for a
# line, runs its fixed count, prints "done …" and waits for a line. The instrumentation of TARGET_PID (the callgrind process; unset:
# CMD itself) is on between the two.
gated() {
	local label=$1; shift
	local fifo=$OUT/$label.in
	rm -f "$fifo"; mkfifo "$fifo"
	: > "$OUT/$label.client"
	"$@" < "$fifo" > "$OUT/$label.client" 2>&1 &
	local client=$!
	pids+=("$client")
	TARGET_PID=${TARGET_PID:-$client}
	exec 3>"$fifo"
	await "$label" ready "$client"
	callgrind_control -i on "$TARGET_PID" > /dev/null 2>&1
	echo go >&3
	await "$label" done "$client"
	callgrind_control -i off "$TARGET_PID" > /dev/null 2>&1
	echo end >&3
	exec 3>&-
}

await() { # LABEL WORD PID: until the client's output has a line starting with WORD
	until grep -q "^$2" "$OUT/$1.client"; do
		kill -0 "$3" 2>/dev/null || { cat "$OUT/$1.client"; exit 1; }
		sleep 0.2
	done
}

# total FILE: the callgrind file's instruction total.
total() { awk '/^totals:/ {print $2}' "$1"; }

# collector FILE: the instructions of the garbage collector's own functions
# (runtime/mgc*.go, mwbbuf.go, and the object scanning of mbitmap.go). Its
# work comes in whole cycles, one more or fewer in a window moves the total
# by a few per cent between runs and commits; the rest does not.
collector() {
	callgrind_annotate --auto=no --threshold=100 "$1" 2>/dev/null |
		awk '/runtime\/mgc|runtime\/mwbbuf\.go|typePointers|runtime\.findObject/ {gsub(",", "", $1); s += $1} END {print s + 0}'
}

callgrind() {
	local label=$1; shift
	# exec: run in the background, the subshell becomes valgrind, so $! is
	# the pid callgrind_control talks to.
	GODEBUG=asyncpreemptoff=1 exec valgrind --tool=callgrind --instr-atstart=no \
		--callgrind-out-file="$OUT/$label.callgrind" --log-file="$OUT/$label.valgrind" "$@"
}

# serve LABEL ADDR CMD…: start CMD under callgrind and wait for ADDR to answer.
serve() {
	local label=$1 addr=$2; shift 2
	callgrind "$label" "$@" > "$OUT/$label.log" 2>&1 &
	TARGET_PID=$!
	pids+=("$TARGET_PID")
	for _ in $(seq 600); do
		curl -s -o /dev/null "http://$addr/" && return 0
		kill -0 "$TARGET_PID" 2>/dev/null || { cat "$OUT/$label.log"; exit 1; }
		sleep 0.2
	done
	echo "$label did not answer on $addr" >&2; exit 1
}

stop() { kill "$TARGET_PID"; wait "$TARGET_PID" 2>/dev/null || true; }

report() { # LABEL N UNIT
	local t g; t=$(total "$OUT/$1.callgrind") g=$(collector "$OUT/$1.callgrind")
	printf '%s %-8s %14s instructions / %d %s = %9.0f per %s, %9.0f without the collector   (%s)\n' "$sha" "$1" "$t" "$2" "$3s" \
		"$(echo "$t / $2" | bc -l)" "$3" "$(echo "($t - $g) / $2" | bc -l)" "$(grep '^done' "$OUT/$1.client" | head -1)"
}

for w in $workloads; do
	case $w in
	plain | group)
		n=${N:-$((BATCH * 100))}
		TARGET_PID=
		gated "$w" callgrind "$w" "$OUT/count" -workload "$w" -n "$n" -batch "$BATCH" -db "$DB"
		wait "$TARGET_PID"
		report "$w" "$n" order
		;;
	page)
		n=${N:-10000}
		port=$((19000 + RANDOM % 900))
		flags=()
		help=$("$OUT/storefront" serve --help 2>&1 || true)
		# Background loops and the stock's TTL tick with the clock, and
		# under callgrind the window lasts a minute, not a fifth of a
		# second: keep their passes (a revalidated view, a page executed
		# again) out of it, as at full speed they nearly are.
		for f in close-interval outbox-interval reconcile-interval refund-interval stock-ttl; do
			grep -q -- "-$f" <<<"$help" && flags+=("--$f" 1h)
		done
		rm -f "$OUT/page.db"*
		STOREFRONT_JWT_SECRET=count-secret-0123456789abcdef serve page "127.0.0.1:$port" \
			"$OUT/storefront" serve --demo --db "sqlite:$OUT/page.db" --addr "127.0.0.1:$port" "${flags[@]}"
		gated page "$OUT/pageclient" -addr "127.0.0.1:$port" -n "$n" -save "$OUT/page.answer"
		stop
		report page "$n" request
		;;
	ceiling)
		n=${N:-10000}
		[ -s "$OUT/page.answer" ] || { echo "ceiling: run page first (it saves the bytes served)" >&2; exit 1; }
		(cd "$BYTESCEILING" && go build -o "$OUT/bytesceiling" .)
		port=$((19000 + RANDOM % 900))
		serve ceiling "127.0.0.1:$port" "$OUT/bytesceiling" "127.0.0.1:$port" "$OUT/page.answer"
		gated ceiling "$OUT/pageclient" -addr "127.0.0.1:$port" -n "$n" -goods 0 -body "$OUT/page.answer.request"
		stop
		report ceiling "$n" request
		;;
	dbcpu)
		for p in plain group; do
			echo "$sha dbcpu $p:"
			"$OUT/count" -workload "$p" -n "$DBN" -batch "$BATCH" -db "$DB" -dbcpu "$ROUNDS" | sed 's/^/    /'
		done
		;;
	*) echo "unknown workload $w" >&2; exit 1 ;;
	esac
done
