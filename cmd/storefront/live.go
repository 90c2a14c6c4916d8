package main

import (
	"context"
	"errors"
	"flag"
	"strings"
	"time"

	"storefront/internal/live"
	"storefront/internal/server"
)

// liveConfig is serve's live stock: the goodsStock subscription over
// WebSocket (docs/live.md).
type liveConfig struct {
	Interval        time.Duration
	MaxConnsPerAddr int
	MaxConns        int // 0: server.MaxLiveConnsFor the memory limit
	MaxSubsPerConn  int
	Origins         string
	PingInterval    time.Duration
}

func liveFlags(fs *flag.FlagSet, c *config) {
	l := &c.Live
	fs.DurationVar(&l.Interval, "live-interval", envDuration("LIVE_INTERVAL", live.DefaultInterval),
		"how often watched goods' stock is checked; at most one message per goods and subscriber per interval (STOREFRONT_LIVE_INTERVAL)")
	fs.IntVar(&l.MaxConnsPerAddr, "live-max-conns-per-addr", int(envInt("LIVE_MAX_CONNS_PER_ADDR", server.DefaultMaxLiveConnsPerAddr)),
		"most WebSocket connections open at once from one client address; more are refused with 429 (STOREFRONT_LIVE_MAX_CONNS_PER_ADDR)")
	fs.IntVar(&l.MaxConns, "live-max-conns", int(envInt("LIVE_MAX_CONNS", 0)),
		"most WebSocket connections open at once on this instance; more are refused with 503 and Retry-After; 0: a quarter of the memory limit at 40 KiB a connection (1331 at the default limit) (STOREFRONT_LIVE_MAX_CONNS)")
	fs.IntVar(&l.MaxSubsPerConn, "live-max-subscriptions", int(envInt("LIVE_MAX_SUBSCRIPTIONS", server.DefaultMaxSubscriptionsPerConn)),
		"most subscriptions running at once on one WebSocket connection; more end with RATE_LIMITED (STOREFRONT_LIVE_MAX_SUBSCRIPTIONS)")
	fs.StringVar(&l.Origins, "live-origins", env("LIVE_ORIGINS", ""),
		"comma-separated host patterns of other origins whose pages may open a WebSocket (this host's own pages always may) (STOREFRONT_LIVE_ORIGINS)")
	fs.DurationVar(&l.PingInterval, "live-ping-interval", envDuration("LIVE_PING_INTERVAL", server.DefaultLivePingInterval),
		"how often the server pings WebSocket clients; no pong within two intervals disconnects (STOREFRONT_LIVE_PING_INTERVAL)")
}

func validLive(c *config) error {
	l := c.Live
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

// liveOptions is the server's side of liveConfig; closing ends every
// WebSocket connection (on shutdown); memLimit is serve's memory limit, from
// which the bound on connections is derived unless one is given.
func (l liveConfig) options(closing context.Context, memLimit int64) server.LiveOptions {
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
