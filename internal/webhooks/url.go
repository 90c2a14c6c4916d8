package webhooks

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"

	"storefront/internal/vocab/errs"
)

// MaxURLLen is the longest webhook url, the width of webhook.url: a longer
// one is refused as input before the database would refuse it.
const MaxURLLen = 2048

// checkURL refuses what a webhook must not be: anything but an absolute
// http or https URL of at most MaxURLLen bytes, and (unless private is
// allowed) a host that is or resolves to an address that is not globally
// reachable (refused) — a webhook must not let an admin token reach the
// machine's own network.
func checkURL(ctx context.Context, raw string, allowPrivate bool) error {
	if len(raw) > MaxURLLen {
		return fmt.Errorf("%w: webhook url longer than %d bytes", errs.InvalidInput, MaxURLLen)
	}
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
		if why := refused(a); why != "" {
			return fmt.Errorf("%w: webhook url: host %q is %s, %s: not globally reachable; serve --webhook-allow-private allows it", errs.InvalidInput, host, a, why)
		}
	}
	return nil
}

// dialGuard refuses, at connection time, an address checkURL would refuse
// (the same rule, refused): a name that resolved to a public address at
// createWebhook may resolve to a private one later (DNS rebinding).
func dialGuard(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	if why := refused(ap.Addr()); why != "" {
		return fmt.Errorf("webhook: refusing to connect to %s, %s: not globally reachable", ap.Addr(), why)
	}
	return nil
}

// special is a range of an IANA special-purpose address registry.
type special struct {
	p    netip.Prefix
	name string
}

func sp(p, name string) special { return special{netip.MustParsePrefix(p), name} }

// refusedV4 are the IPv4 ranges a webhook may not reach: those of the IANA
// IPv4 Special-Purpose Address Registry that are not globally reachable,
// the deprecated 6to4 relay anycast, and multicast. 192.0.0.0/24 is
// refused whole, with its two globally reachable anycast addresses (PCP,
// TURN): neither is a webhook receiver.
var refusedV4 = []special{
	sp("0.0.0.0/8", `in 0.0.0.0/8 ("this network")`),
	sp("10.0.0.0/8", "in 10.0.0.0/8 (private use)"),
	sp("100.64.0.0/10", "in 100.64.0.0/10 (shared address space of carrier-grade NAT)"),
	sp("127.0.0.0/8", "in 127.0.0.0/8 (loopback)"),
	sp("169.254.0.0/16", "in 169.254.0.0/16 (link-local, a cloud's metadata service)"),
	sp("172.16.0.0/12", "in 172.16.0.0/12 (private use)"),
	sp("192.0.0.0/24", "in 192.0.0.0/24 (IETF protocol assignments)"),
	sp("192.0.2.0/24", "in 192.0.2.0/24 (documentation, TEST-NET-1)"),
	sp("192.88.99.0/24", "in 192.88.99.0/24 (deprecated 6to4 relay anycast)"),
	sp("192.168.0.0/16", "in 192.168.0.0/16 (private use)"),
	sp("198.18.0.0/15", "in 198.18.0.0/15 (benchmarking)"),
	sp("198.51.100.0/24", "in 198.51.100.0/24 (documentation, TEST-NET-2)"),
	sp("203.0.113.0/24", "in 203.0.113.0/24 (documentation, TEST-NET-3)"),
	sp("224.0.0.0/4", "in 224.0.0.0/4 (multicast)"),
	sp("255.255.255.255/32", "the limited broadcast address"), // before 240/4, which holds it: the more precise name
	sp("240.0.0.0/4", "in 240.0.0.0/4 (reserved)"),
}

// refusedV6 are the IPv6 ranges of the IANA IPv6 Special-Purpose Address
// Registry that are not globally reachable, and the deprecated site-local
// and multicast ranges. Those of 2001::/23 are in ietf and reachableIETF;
// anything else outside global unicast (2000::/3) that embeds no IPv4
// address is refused by refused itself.
var refusedV6 = []special{
	sp("::1/128", "the loopback address"),
	sp("::/128", "the unspecified address"),
	sp("64:ff9b:1::/48", "in 64:ff9b:1::/48 (local-use IPv4/IPv6 translation)"),
	sp("100::/64", "in 100::/64 (discard-only)"),
	sp("100:0:0:1::/64", "in 100:0:0:1::/64 (dummy prefix)"),
	sp("2001:db8::/32", "in 2001:db8::/32 (documentation)"),
	sp("3fff::/20", "in 3fff::/20 (documentation)"),
	sp("5f00::/16", "in 5f00::/16 (segment routing SIDs)"),
	sp("fc00::/7", "in fc00::/7 (unique local)"),
	sp("fe80::/10", "in fe80::/10 (link-local)"),
	sp("fec0::/10", "in fec0::/10 (deprecated site-local)"),
	sp("ff00::/8", "in ff00::/8 (multicast)"),
}

// ietf is 2001::/23, IETF protocol assignments: not globally reachable but
// for Teredo (2001::/32, judged by its client's address) and the ranges
// of reachableIETF.
var ietf = netip.MustParsePrefix("2001::/23")

var reachableIETF = []netip.Prefix{
	netip.MustParsePrefix("2001:1::1/128"),   // Port Control Protocol anycast
	netip.MustParsePrefix("2001:1::2/128"),   // TURN anycast
	netip.MustParsePrefix("2001:1::3/128"),   // DNS-SD service registration anycast
	netip.MustParsePrefix("2001:3::/32"),     // AMT
	netip.MustParsePrefix("2001:4:112::/48"), // AS112-v6
	netip.MustParsePrefix("2001:20::/28"),    // ORCHIDv2
	netip.MustParsePrefix("2001:30::/28"),    // drone remote ID
}

var globalUnicast = netip.MustParsePrefix("2000::/3")

// Forms of IPv6 address that carry an IPv4 address: a connection to one
// reaches (or is translated to) that IPv4 address, so they are judged by
// it.
var (
	mapped     = netip.MustParsePrefix("::ffff:0:0/96")   // IPv4-mapped: a dial of it is a dial of its IPv4 address
	translated = netip.MustParsePrefix("::ffff:0:0:0/96") // SIIT's IPv4-translated (RFC 2765)
	compatible = netip.MustParsePrefix("::/96")           // deprecated IPv4-compatible
	nat64      = netip.MustParsePrefix("64:ff9b::/96")    // NAT64's well-known prefix (RFC 6052)
	sixToFour  = netip.MustParsePrefix("2002::/16")       // 6to4: the IPv4 address in bits 16–47
	teredo     = netip.MustParsePrefix("2001::/32")       // Teredo: the client's IPv4 address, inverted, in the last 32 bits
)

// embedded returns the IPv4 address a carries in one of the forms above,
// and the form's name.
func embedded(a netip.Addr) (netip.Addr, string, bool) {
	b := a.As16()
	last := netip.AddrFrom4([4]byte(b[12:]))
	switch {
	case mapped.Contains(a):
		return last, "IPv4-mapped", true
	case translated.Contains(a):
		return last, "IPv4-translated (SIIT)", true
	case compatible.Contains(a):
		return last, "IPv4-compatible", true
	case nat64.Contains(a):
		return last, "NAT64", true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), "6to4", true
	case teredo.Contains(a):
		var v4 [4]byte
		binary.BigEndian.PutUint32(v4[:], binary.BigEndian.Uint32(b[12:])^0xffffffff)
		return netip.AddrFrom4(v4), "Teredo", true
	}
	return netip.Addr{}, "", false
}

// refused returns why a webhook must not reach a (for a message: "in
// 10.0.0.0/8 (private use)"), or "" when it may: the one rule of
// registration (checkURL) and of every connection (dialGuard).
func refused(a netip.Addr) string {
	a = a.WithZone("")
	if a.Is4() {
		for _, r := range refusedV4 {
			if r.p.Contains(a) {
				return r.name
			}
		}
		return ""
	}
	for _, r := range refusedV6 {
		if r.p.Contains(a) {
			return r.name
		}
	}
	// Before the prefixes of IPv6 itself: ::ffff:100.64.0.1 is
	// 100.64.0.1, which no IPv6 prefix (nor 100.64.0.0/10 unmapped) holds.
	if v4, form, ok := embedded(a); ok {
		if why := refused(v4); why != "" {
			return fmt.Sprintf("%s of %s, %s", form, v4, why)
		}
		return ""
	}
	if ietf.Contains(a) {
		for _, p := range reachableIETF {
			if p.Contains(a) {
				return ""
			}
		}
		return "in 2001::/23 (IETF protocol assignments)"
	}
	if !globalUnicast.Contains(a) {
		return "outside 2000::/3 (not global unicast)"
	}
	return ""
}
