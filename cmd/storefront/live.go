package main

import (
	"context"
	"errors"
	"strings"
	"time"

	"storefront/internal/server"
)

// liveFlags are serve's live stock: the goodsStock subscription over
// WebSocket (docs/live.md).
type liveFlags struct {
	Interval        time.Duration `name:"live-interval" env:"STOREFRONT_LIVE_INTERVAL" default:"${live_interval}" help:"how often watched goods' stock is checked; at most one message per goods and subscriber per interval"`
	MaxConnsPerAddr int           `name:"live-max-conns-per-addr" env:"STOREFRONT_LIVE_MAX_CONNS_PER_ADDR" default:"${live_max_conns_per_addr}" help:"most WebSocket connections open at once from one client address; more are refused with 429"`
	MaxConns        int           `name:"live-max-conns" env:"STOREFRONT_LIVE_MAX_CONNS" help:"most WebSocket connections open at once on this instance; more are refused with 503 and Retry-After; 0: a quarter of the memory limit at 40 KiB a connection (1331 at the default limit)"`
	MaxSubsPerConn  int           `name:"live-max-subscriptions" env:"STOREFRONT_LIVE_MAX_SUBSCRIPTIONS" default:"${live_max_subscriptions}" help:"most subscriptions running at once on one WebSocket connection; more end with RATE_LIMITED"`
	Origins         string        `name:"live-origins" env:"STOREFRONT_LIVE_ORIGINS" help:"comma-separated host patterns of other origins whose pages may open a WebSocket (this host's own pages always may)"`
	PingInterval    time.Duration `name:"live-ping-interval" env:"STOREFRONT_LIVE_PING_INTERVAL" default:"${live_ping_interval}" help:"how often the server pings WebSocket clients; no pong within two intervals disconnects"`
}

func (l *liveFlags) Validate() error {
	if l.Interval < 10*time.Millisecond {
		return errors.New("--live-interval must be at least 10ms")
	}
	if l.MaxConnsPerAddr < 1 || l.MaxSubsPerConn < 1 {
		return errors.New("--live-max-conns-per-addr and --live-max-subscriptions must be at least 1")
	}
	if l.MaxConns < 0 {
		return errors.New("--live-max-conns must be 0 (derived from the memory limit) or more")
	}
	if l.PingInterval < time.Second {
		return errors.New("--live-ping-interval must be at least 1s")
	}
	return nil
}

// options are the server's side of the flags; closing ends every
// WebSocket connection (on shutdown); memLimit is serve's memory limit, from
// which the bound on connections is derived unless one is given.
func (l *liveFlags) options(closing context.Context, memLimit int64) server.LiveOptions {
	var origins []string
	for o := range strings.SplitSeq(l.Origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			origins = append(origins, o)
		}
	}
	maxConns := l.MaxConns
	if maxConns == 0 {
		maxConns = server.MaxLiveConnsFor(memoryLimitInForce(memLimit))
	}
	return server.LiveOptions{
		MaxConnsPerAddr: l.MaxConnsPerAddr, MaxConns: maxConns, MaxSubscriptionsPerConn: l.MaxSubsPerConn,
		OriginPatterns: origins, PingInterval: l.PingInterval, Closing: closing,
	}
}
