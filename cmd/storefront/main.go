// Command storefront is the one binary: serve, migrate, seed-demo,
// close-expired, reconcile, seed-bench, notify, token. Its configuration
// is declared once, in config.go.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	if errors.Is(err, errHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "storefront:", err)
		os.Exit(1)
	}
}

// errHelp is run's answer when it printed help instead of running.
var errHelp = errors.New("help printed")

// logLevel is the least level logged: --log-level (STOREFRONT_LOG_LEVEL).
var logLevel = new(slog.LevelVar)

func run(ctx context.Context, args []string) error {
	// Every line logged in a request or a span carries its request_id and
	// its trace_id and span_id (tracing on).
	slog.SetDefault(slog.New(server.LogHandler(tracing.LogHandler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel})))))
	return runWith(ctx, args, os.Stdout)
}

// runWith parses args into the configuration and runs its command; help
// goes to out.
func runWith(ctx context.Context, args []string, out io.Writer) error {
	c := newCLI()
	helped := false
	parser, err := newParser(c, out, func(int) { helped = true })
	if err != nil {
		return err
	}
	if len(args) == 0 {
		parser.Stdout = os.Stderr
		_, _ = parser.Parse([]string{"--help"})
		return errors.New("no command given")
	}
	if args[0] == "help" {
		args = []string{"--help"}
	}
	kctx, err := parser.Parse(args)
	if helped {
		return errHelp
	}
	if err != nil {
		return err
	}
	logLevel.Set(c.LogLevel)
	kctx.BindTo(ctx, (*context.Context)(nil))
	return kctx.Run()
}
