// Command storefront is the one binary: serve, migrate, seed-demo,
// close-expired, reconcile, notify, token.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"storefront/internal/platform/tracing"
	"storefront/internal/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "storefront:", err)
		os.Exit(1)
	}
}

const usage = `storefront — GraphQL storefront backend

Usage:
  storefront serve [--demo] [--db sqlite:PATH|mysql:DSN|postgres:DSN] [--addr HOST:PORT]
  storefront migrate [--db …]
  storefront seed-demo [--db …]
  storefront close-expired [--db …] [--order-ttl 30m]
  storefront reconcile [--db …]         (exit 1 when stock and ledger, or the listing and its goods, differ, or the category tree has a fault)
  storefront seed-bench --goods 100000 [--db …]   (a generated catalog for the listing benchmark)
  storefront notify --order SN --amount 89.00 [--provider mock] [--status SUCCESS]
  storefront token --sub ID --role admin|customer [--ttl 1h]

Every flag can also be set as STOREFRONT_<NAME> (e.g. STOREFRONT_DB).
Run "storefront COMMAND -h" for the flags of a command.
`

// logLevel is the least level logged: STOREFRONT_LOG_LEVEL, or serve's
// --log-level.
var logLevel = new(slog.LevelVar)

func run(ctx context.Context, args []string) error {
	if v := env("LOG_LEVEL", ""); v != "" {
		if err := logLevel.UnmarshalText([]byte(v)); err != nil {
			return fmt.Errorf("STOREFRONT_LOG_LEVEL: %w", err)
		}
	}
	// Every line logged in a request or a span carries its request_id and
	// its trace_id and span_id (tracing on).
	slog.SetDefault(slog.New(server.LogHandler(tracing.LogHandler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel})))))
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return errors.New("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(ctx, rest)
	case "migrate":
		return migrate(ctx, rest)
	case "seed-demo":
		return seedDemo(ctx, rest)
	case "close-expired":
		return closeExpired(ctx, rest)
	case "reconcile":
		return reconcile(ctx, rest)
	case "seed-bench":
		return seedBench(ctx, rest)
	case "notify":
		return notify(rest)
	case "token":
		return token(rest)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	default:
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}
