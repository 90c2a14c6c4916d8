package webhooks

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"

	"storefront/errs"
)

// checkURL refuses what a webhook must not be: anything but an absolute
// http or https URL, and (unless private is allowed) a host that is or
// resolves to a loopback, private, link-local or unspecified address — a
// webhook must not let an admin token reach the machine's own network.
func checkURL(ctx context.Context, raw string, allowPrivate bool) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("%w: webhook url %q: want an absolute http or https URL", errs.InvalidInput, raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: webhook url %q: scheme %q, want http or https", errs.InvalidInput, raw, u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("%w: webhook url: credentials in the URL are not accepted", errs.InvalidInput)
	}
	if allowPrivate {
		return nil
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return fmt.Errorf("%w: webhook url: host %q does not resolve: %v", errs.InvalidInput, host, err)
		}
		addrs = ips
	}
	for _, a := range addrs {
		if !public(a) {
			return fmt.Errorf("%w: webhook url: host %q is a loopback, private or link-local address (%s); serve --webhook-allow-private allows it", errs.InvalidInput, host, a)
		}
	}
	return nil
}

// public reports whether a is an address a webhook may reach.
func public(a netip.Addr) bool {
	a = a.Unmap()
	return !(a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() ||
		cgnat.Contains(a))
}

// cgnat is the shared address space of carrier-grade NAT (RFC 6598): as
// private as 10/8 for our purpose.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// dialGuard refuses, at connection time, an address checkURL would refuse:
// a name that resolved to a public address at createWebhook may resolve to
// a private one later (DNS rebinding).
func dialGuard(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	if !public(ap.Addr()) {
		return fmt.Errorf("webhook: refusing to connect to %s (loopback, private or link-local)", ap.Addr())
	}
	return nil
}
