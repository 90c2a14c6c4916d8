package shipping

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// Limits of what the book and the templates hold.
const (
	MaxAddresses   = 20 // per customer
	MaxTemplates   = 50 // shippingTemplates answers them all
	MaxRules       = 20 // per template
	MaxRuleRegions = 40 // region codes per rule: every province fits
	MaxUnits       = 1_000_000_000
	// MaxFee bounds a rule's fees and a template's freeOver: 100,000.00.
	MaxFee = money.Money(10_000_000)
)

var (
	phoneRE  = regexp.MustCompile(`^\+?[0-9]{3,19}$`)
	postalRE = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z -]{1,8}[0-9A-Za-z]$`)
)

// checkRegion is the place code names, or INVALID_INPUT saying why it is
// none: an address's regionCode is the 6-digit code of its district in the
// GB/T 2260 table (gbt2260.go), not a code of the right shape alone.
func checkRegion(code string) (Region, error) {
	if r, ok := LookupRegion(code); ok {
		return r, nil
	}
	if c, ok := code6(code); ok {
		if name, ok := regions().names[c]; ok {
			return Region{}, fmt.Errorf("%w: regionCode %q is %s, which has districts: give the district's 6-digit code (GB/T 2260, e.g. 310104 for 上海市徐汇区)", errs.InvalidInput, code, name)
		}
	}
	return Region{}, fmt.Errorf("%w: regionCode %q is not a district's code in the GB/T 2260 table: want the district's 6-digit administrative code (e.g. 310104 for 上海市徐汇区)", errs.InvalidInput, code)
}

// checkRuleRegion refuses a rule's region code that is not "*", or the
// code of a real province (2 digits), city (4) or district (6).
func checkRuleRegion(code string) error {
	if !ruleRegion(code) {
		return fmt.Errorf("%w: region code %q: want \"*\", or the GB/T 2260 code of a province (2 digits, e.g. 31), a city (4, e.g. 6501) or a district (6, e.g. 310104)", errs.InvalidInput, code)
	}
	return nil
}

// named is a with the names of its region, or a as it is when its code is
// not in the table (an address written before codes were checked).
func (a OrderAddress) named() OrderAddress {
	if r, ok := LookupRegion(a.RegionCode); ok {
		a.Province, a.City, a.District = r.Province, r.City, r.District
	}
	return a
}

// text checks a required field of 1 to max characters, trimmed.
func text(what, v string, max int) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" || utf8.RuneCountInString(v) > max {
		return "", fmt.Errorf("%w: %s: 1 to %d characters", errs.InvalidInput, what, max)
	}
	return v, nil
}

// check validates and trims an address as a customer wrote it; its
// province, city and district are the names of its regionCode, whatever
// the customer wrote there, so the fee and the address say one place.
func (a OrderAddress) check() (OrderAddress, error) {
	var err error
	for _, f := range []struct {
		what string
		v    *string
		max  int
	}{{"name", &a.Name, 64}, {"line", &a.Line, 120}} {
		if *f.v, err = text(f.what, *f.v, f.max); err != nil {
			return a, err
		}
	}
	a.Phone = strings.TrimSpace(a.Phone)
	if !phoneRE.MatchString(a.Phone) {
		return a, fmt.Errorf("%w: phone %q: 3 to 19 digits, optionally after a +", errs.InvalidInput, a.Phone)
	}
	r, err := checkRegion(a.RegionCode)
	if err != nil {
		return a, err
	}
	a.Province, a.City, a.District = r.Province, r.City, r.District
	a.PostalCode = strings.TrimSpace(a.PostalCode)
	if a.PostalCode != "" && !postalRE.MatchString(a.PostalCode) {
		return a, fmt.Errorf("%w: postalCode %q: 3 to 10 letters, digits, spaces or dashes", errs.InvalidInput, a.PostalCode)
	}
	return a, nil
}
