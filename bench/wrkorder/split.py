#!/usr/bin/env python3
"""split.py BIN ORDERS PROFILE...: CPU µs per order of serve, by category.

BIN is the binary the profiles were taken of, ORDERS the orders placed while
they were taken (orders/s times 5 s for each of run.sh's profiles). Each sample
goes to the first category, in the order listed, of which one frame of its
stack matches the pattern: the outbox's reads are the outbox's even though
they run in the driver, and the resolver's wait for its batch is the
resolver's. docs/benchmarks.md, "CPU per order (issue 32)"."""
import re, subprocess, sys
bin, orders, profs = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
out = subprocess.run(["go", "tool", "pprof", "-traces", bin] + profs, capture_output=True, text=True).stdout
cats = [
 ("outbox dispatch (events read back, logged)", r"checkout\.\(\*Service\)\.(eventsOf|Dispatch|DispatchBatch)|checkout\.LogSink|storefront/events|storefront/webhooks"),
 ("batch: checkout.ParseDecisions/decide (Go side of the outcome)", r"checkout\.\(\*Service\)\.(decideBatch|decide)\b"),
 ("batch: SQL driver (go-sql-driver/mysql, database/sql)", r"go-sql-driver/mysql|database/sql"),
 ("batch: SQL text and arguments", r"checkout\.\(\*(mysqlBatcher|Service)\)\.(write|writeBatchMySQL|batchMySQL)|storefront/store\.\(\*Text\)|checkout\.\(\*Order\)\.write"),
 ("batch: rest of the batch goroutine (hand-off, wake-ups)", r"checkout\.\(\*Service\)\.(run|runBatch|handOver|startBatches)$"),
 ("resolver -> checkout.Place (input, ticket, wait)", r"checkout\.\(\*Service\)\.Place$|resolvers\.\(\*mutationResolver\)\.PlaceOrder"),
 ("gqlgen: execution (field resolvers, arguments, marshal)", r"graph\.\(\*executableSchema\)\.Exec"),
 ("gqlgen: operation context (cached doc, validate, cost, limits)", r"executor\.\(\*Executor\)\.CreateOperationContext"),
 ("request JSON decode (body, variables)", r"server\.parseRequest|server\.decodeNumbers|transport\.jsonDecode"),
 ("response JSON encode and write", r"server\.marshalResponse|server\.\(\*httpTransport\)\.write$|transport\.writeJson"),
 ("gqlgen: extensions around the response (metrics, deadline, memo)", r"executor\.\(\*Executor\)\.DispatchOperation|server\.opMetrics|server\.deadline"),
 ("transport and handler rest (rate limit, readRaw, contexts)", r"handler\.\(\*Server\)\.ServeHTTP"),
 ("middleware (request id, JWT cache, body limit, key)", r"net/http\.\(\*ServeMux\)\.ServeHTTP|server\.requestID|storefront/server\.build|storefront/server\.New"),
 ("HTTP: read request and headers", r"net/http\.\(\*conn\)\.readRequest|net/http\.\(\*connReader\)\.backgroundRead"),
 ("HTTP: write and flush response", r"net/http\.\(\*response\)\.finishRequest|net/http\.\(\*conn\)\.finalFlush|chunkWriter"),
 ("HTTP: rest of conn.serve", r"net/http\.\(\*conn\)\.serve"),
 ("GC (background mark, sweep)", r"runtime\.gcBgMarkWorker|runtime\.bgsweep|runtime\.bgscavenge"),
 ("scheduler, netpoll, timers", r"runtime\.(schedule|findRunnable|mcall|park_m|netpoll)"),
]
tot = {c: 0.0 for c, _ in cats}; tot["other"] = 0.0
for block in out.split("-----------+-------------------------------------------------------")[1:]:
    lines = [l for l in block.strip("\n").split("\n") if l.strip()]
    if not lines: continue
    m = re.match(r"\s*([\d.]+)(ms|s|us)\s+(.*)", lines[0])
    if not m: continue
    v = float(m.group(1)) * {"ms": 1e-3, "s": 1, "us": 1e-6}[m.group(2)]
    frames = [m.group(3).strip()] + [l.strip() for l in lines[1:]]
    for c, pat in cats:
        if any(re.search(pat, f) for f in frames):
            tot[c] += v; break
    else:
        tot["other"] += v
all_ = sum(tot.values())
for c, _ in cats + [("other", "")]:
    print(f"{c}\t{tot[c]*1e6/orders:.1f}")
print(f"total\t{all_*1e6/orders:.1f}")
