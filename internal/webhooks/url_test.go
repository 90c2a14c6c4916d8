package webhooks

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"storefront/internal/vocab/errs"
)

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		url          string
		allowPrivate bool
		ok           bool
	}{
		{"https://93.184.215.14/hook", false, true},
		{"http://93.184.215.14:8080/hook?x=1", false, true},
		{"https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook", false, true},
		{"ftp://93.184.215.14/hook", false, false},
		{"93.184.215.14/hook", false, false},
		{"https:///hook", false, false},
		{"https://user:pw@93.184.215.14/hook", false, false},
		{"http://127.0.0.1:9000/hook", false, false},
		{"http://localhost:9000/hook", false, false},
		{"http://[::1]/hook", false, false},
		{"http://10.1.2.3/hook", false, false},
		{"http://172.16.0.9/hook", false, false},
		{"http://192.168.1.1/hook", false, false},
		{"http://169.254.169.254/latest/meta-data", false, false}, // link-local: a cloud's metadata service
		{"http://[fe80::1]/hook", false, false},
		{"http://[fe80::1%25eth0]/hook", false, false},
		{"http://[fd00::1]/hook", false, false},
		{"http://0.0.0.0/hook", false, false},
		{"http://100.64.0.1/hook", false, false},
		{"http://[::ffff:127.0.0.1]/hook", false, false},
		{"https://93.184.215.14/" + strings.Repeat("a", MaxURLLen-len("https://93.184.215.14/")), false, true},
		{"https://93.184.215.14/" + strings.Repeat("a", MaxURLLen-len("https://93.184.215.14/")+1), false, false},
		{"http://127.0.0.1:9000/hook", true, true},
		{"http://[::ffff:100.64.0.1]/hook", true, true},
		{"ftp://127.0.0.1/hook", true, false},
		{"http://127.0.0.1/" + strings.Repeat("a", MaxURLLen), true, false},
	} {
		err := checkURL(context.Background(), tc.url, tc.allowPrivate)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, errs.InvalidInput)) {
			t.Errorf("checkURL(%.80q, allowPrivate=%v) = %v; want ok=%v (else INVALID_INPUT)", tc.url, tc.allowPrivate, err, tc.ok)
		}
	}
}

// Issue 38, item 6: the shared address space of carrier-grade NAT in its
// IPv4-mapped form. Before, the range was compared with the address as
// written (an IPv6 address, which no IPv4 prefix contains), and the URL
// was taken; the answer must name the IPv4 range it falls in.
func TestMappedSharedAddressIsRefused(t *testing.T) {
	err := checkURL(context.Background(), "http://[::ffff:100.64.0.1]/", false)
	if !errors.Is(err, errs.InvalidInput) || !strings.Contains(err.Error(), "100.64.0.0/10") {
		t.Fatalf("checkURL(http://[::ffff:100.64.0.1]/) = %v; want INVALID_INPUT naming 100.64.0.0/10", err)
	}
}

// Each refused range at its edges, and the addresses just outside: refused
// names what the address falls in ("" where a webhook may go), and
// registration (checkURL) and every connection (dialGuard) apply that one
// rule.
func TestRefusedRanges(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		// IPv4 Special-Purpose Address Registry, not globally reachable.
		{"0.0.0.0", "0.0.0.0/8"}, {"0.255.255.255", "0.0.0.0/8"}, {"1.0.0.0", ""},
		{"9.255.255.255", ""}, {"10.0.0.0", "10.0.0.0/8"}, {"10.255.255.255", "10.0.0.0/8"}, {"11.0.0.0", ""},
		{"100.63.255.255", ""}, {"100.64.0.0", "100.64.0.0/10"}, {"100.127.255.255", "100.64.0.0/10"}, {"100.128.0.0", ""},
		{"126.255.255.255", ""}, {"127.0.0.0", "127.0.0.0/8"}, {"127.255.255.255", "127.0.0.0/8"}, {"128.0.0.0", ""},
		{"169.253.255.255", ""}, {"169.254.0.0", "169.254.0.0/16"}, {"169.254.255.255", "169.254.0.0/16"}, {"169.255.0.0", ""},
		{"172.15.255.255", ""}, {"172.16.0.0", "172.16.0.0/12"}, {"172.31.255.255", "172.16.0.0/12"}, {"172.32.0.0", ""},
		{"191.255.255.255", ""}, {"192.0.0.0", "192.0.0.0/24"}, {"192.0.0.255", "192.0.0.0/24"}, {"192.0.1.0", ""},
		{"192.0.1.255", ""}, {"192.0.2.0", "192.0.2.0/24"}, {"192.0.2.255", "192.0.2.0/24"}, {"192.0.3.0", ""},
		{"192.88.98.255", ""}, {"192.88.99.0", "192.88.99.0/24"}, {"192.88.99.255", "192.88.99.0/24"}, {"192.88.100.0", ""},
		{"192.167.255.255", ""}, {"192.168.0.0", "192.168.0.0/16"}, {"192.168.255.255", "192.168.0.0/16"}, {"192.169.0.0", ""},
		{"198.17.255.255", ""}, {"198.18.0.0", "198.18.0.0/15"}, {"198.19.255.255", "198.18.0.0/15"}, {"198.20.0.0", ""},
		{"198.51.99.255", ""}, {"198.51.100.0", "198.51.100.0/24"}, {"198.51.100.255", "198.51.100.0/24"}, {"198.51.101.0", ""},
		{"203.0.112.255", ""}, {"203.0.113.0", "203.0.113.0/24"}, {"203.0.113.255", "203.0.113.0/24"}, {"203.0.114.0", ""},
		{"223.255.255.255", ""}, {"224.0.0.0", "multicast"}, {"239.255.255.255", "multicast"},
		{"240.0.0.0", "240.0.0.0/4"}, {"255.255.255.254", "240.0.0.0/4"}, {"255.255.255.255", "broadcast"},
		// Special-purpose but globally reachable: AS112, AMT, direct delegation AS112.
		{"192.31.196.1", ""}, {"192.52.193.1", ""}, {"192.175.48.1", ""}, {"93.184.215.14", ""},

		// IPv6 Special-Purpose Address Registry, not globally reachable.
		{"::1", "loopback"}, {"::", "unspecified"},
		{"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2000::/3"}, {"fc00::", "fc00::/7"}, {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fc00::/7"}, {"fe00::", "2000::/3"},
		{"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2000::/3"}, {"fe80::", "fe80::/10"}, {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fe80::/10"},
		{"fe80::1%eth0", "fe80::/10"},
		{"fec0::", "fec0::/10"}, {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fec0::/10"},
		{"ff00::", "multicast"}, {"ff02::1", "multicast"}, {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast"},
		{"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", ""}, {"2001:db8::", "2001:db8::/32"}, {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::/32"}, {"2001:db9::", ""},
		{"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""}, {"3fff::", "3fff::/20"}, {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff::/20"}, {"3fff:1000::", ""},
		{"4000::", "2000::/3"}, {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2000::/3"}, {"2000::", ""},
		{"5f00::", "5f00::/16"}, {"5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "5f00::/16"},
		{"100::", "100::/64"}, {"100::ffff:ffff:ffff:ffff", "100::/64"}, {"100:0:0:1::", "100:0:0:1::/64"}, {"100:0:0:2::", "2000::/3"},
		{"64:ff9b:1::", "64:ff9b:1::/48"}, {"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "64:ff9b:1::/48"}, {"64:ff9b:2::", "2000::/3"},
		// 2001::/23, IETF protocol assignments, and its globally reachable ranges.
		{"2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""}, {"2001:1::", "2001::/23"},
		{"2001:1::1", ""}, {"2001:1::2", ""}, {"2001:1::3", ""}, {"2001:1::4", "2001::/23"},
		{"2001:2::", "2001::/23"}, {"2001:2:ffff:ffff:ffff:ffff:ffff:ffff", "2001::/23"},
		{"2001:3::", ""}, {"2001:3:ffff:ffff:ffff:ffff:ffff:ffff", ""}, {"2001:4::", "2001::/23"},
		{"2001:4:112::", ""}, {"2001:4:112:ffff:ffff:ffff:ffff:ffff", ""}, {"2001:4:113::", "2001::/23"},
		{"2001:10::", "2001::/23"}, {"2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", "2001::/23"},
		{"2001:20::", ""}, {"2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", ""}, {"2001:30::", ""}, {"2001:3f:ffff:ffff:ffff:ffff:ffff:ffff", ""},
		{"2001:40::", "2001::/23"}, {"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "2001::/23"}, {"2001:200::", ""},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", ""}, {"2a00:1450:4001::1", ""},

		// IPv6 forms that embed an IPv4 address, judged by it.
		{"::ffff:100.64.0.1", "100.64.0.0/10"}, {"::ffff:100.63.255.255", ""}, {"::ffff:100.128.0.0", ""},
		{"::ffff:127.0.0.1", "127.0.0.0/8"}, {"::ffff:198.18.0.0", "198.18.0.0/15"}, {"::ffff:255.255.255.255", "broadcast"},
		{"::ffff:93.184.215.14", ""},
		{"::ffff:0:a00:1", "10.0.0.0/8"}, {"::ffff:0:c0a8:101", "192.168.0.0/16"}, {"::ffff:0:5db8:d70e", ""}, // SIIT
		{"::2", "0.0.0.0/8"}, {"::a00:1", "10.0.0.0/8"}, {"::7f00:1", "127.0.0.0/8"}, {"::5db8:d70e", ""}, // IPv4-compatible
		{"64:ff9b::a00:1", "10.0.0.0/8"}, {"64:ff9b::7f00:1", "127.0.0.0/8"}, {"64:ff9b::c000:22d", "192.0.2.0/24"},
		{"64:ff9b::643f:ffff", ""}, {"64:ff9b::6440:0", "100.64.0.0/10"}, {"64:ff9b::647f:ffff", "100.64.0.0/10"}, {"64:ff9b::6480:0", ""},
		{"64:ff9b::5db8:d70e", ""}, {"64:ff9b::1:0:0", "2000::/3"}, // past the /96: no IPv4 address, not global unicast
		{"2002:a00:1::", "10.0.0.0/8"}, {"2002:c000:201::", "192.0.2.0/24"}, {"2002:c058:6301::", "192.88.99.0/24"},
		{"2002:e000::", "multicast"}, {"2002:5db8:d70e::1", ""}, {"2002:ffff:ffff::", "broadcast"}, {"2003::", ""},
		// Teredo: server 65.54.227.120, the client's address inverted in the
		// last 32 bits (RFC 4380's own example is the first: 192.0.2.45).
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "192.0.2.0/24"},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.0/8"},
		{"2001:0:4136:e378:8000:63bf:f5ff:fffe", "10.0.0.0/8"},
		{"2001:0:4136:e378:8000:63bf:9bc0:0", ""}, {"2001:0:4136:e378:8000:63bf:9bbf:ffff", "100.64.0.0/10"},
		{"2001:0:4136:e378:8000:63bf:9b80:0", "100.64.0.0/10"}, {"2001:0:4136:e378:8000:63bf:9b7f:ffff", ""},
		{"2001:0:4136:e378:8000:63bf:a247:28f1", ""},
	} {
		a := netip.MustParseAddr(tc.addr)
		got := refused(a)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("refused(%s) = %q, want %q", tc.addr, got, tc.want)
		}
		url := "http://" + strings.ReplaceAll(netip.AddrPortFrom(a, 80).String(), "%", "%25") + "/hook"
		if err := checkURL(context.Background(), url, false); (err == nil) != (tc.want == "") {
			t.Errorf("checkURL(%s) = %v, want refused=%v", url, err, tc.want != "")
		}
		if err := dialGuard("tcp", netip.AddrPortFrom(a, 443).String(), nil); (err == nil) != (tc.want == "") {
			t.Errorf("dialGuard(%s) = %v, want refused=%v", a, err, tc.want != "")
		}
	}
}

func TestCheckEvents(t *testing.T) {
	s := New(nil, Config{EventTypes: eventTypes})
	if got, err := s.checkEvents([]string{"OrderPaid", "OrderClosed", "OrderPaid"}); err != nil || got != "OrderPaid,OrderClosed" {
		t.Errorf("checkEvents = %q, %v", got, err)
	}
	for _, bad := range [][]string{nil, {}, {"OrderShipped"}, {"OrderPaid", ""}} {
		if _, err := s.checkEvents(bad); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("checkEvents(%q) = %v, want INVALID_INPUT", bad, err)
		}
	}
	// The types offered are the configuration's, whatever they are.
	other := New(nil, Config{EventTypes: []string{"ShipmentSent"}})
	if got, err := other.checkEvents([]string{"ShipmentSent"}); err != nil || got != "ShipmentSent" {
		t.Errorf("checkEvents of a configured type = %q, %v", got, err)
	}
	if _, err := other.checkEvents([]string{"OrderPaid"}); !errors.Is(err, errs.InvalidInput) {
		t.Errorf("checkEvents of a type not configured = %v, want INVALID_INPUT", err)
	}
}
