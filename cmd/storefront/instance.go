package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"storefront/internal/platform/outbox"
)

// maxInstanceID is the width of the claimed_by columns.
const maxInstanceID = 128

// instanceID is --instance-id, or the host name and the listen address:
// stable across restarts of one process on one machine, and different for
// two processes on one machine (they cannot listen on one address).
func instanceID(given, addr string) (string, error) {
	id := given
	if id == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "localhost"
		}
		id = host + "/" + addr
	}
	if len(id) > maxInstanceID {
		return "", fmt.Errorf("--instance-id %q: at most %d bytes", id, maxInstanceID)
	}
	for _, r := range id {
		if r <= ' ' || r > '~' {
			return "", fmt.Errorf("--instance-id %q: want printable ASCII without spaces", id)
		}
	}
	return id, nil
}

// takeBack releases the outbox and webhook claims this instance's previous
// life held (it was killed or crashed), before the dispatcher and the
// sender start: its events go now rather than after their leases. A
// failure only leaves them to their leases.
func takeBack(ctx context.Context, dispatcher *outbox.Dispatcher, out *sinks) {
	start := time.Now()
	rows, err := dispatcher.TakeBack(ctx)
	if err != nil {
		slog.Warn("taking back outbox claims failed; they wait for their lease", "err", err)
	}
	attempts, err := out.hooks.TakeBack(ctx)
	if err != nil {
		slog.Warn("taking back webhook deliveries failed; they wait for their lease", "err", err)
	}
	if rows > 0 || attempts > 0 {
		slog.Info("took back this instance's claims from before its start", "outbox_claims", rows, "webhook_attempts", attempts, "took", time.Since(start))
	}
}
