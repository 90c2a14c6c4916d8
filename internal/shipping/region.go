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
	digitsRE = regexp.MustCompile(`^[0-9]+$`)
)

// checkRegion refuses anything but a district's 6-digit code whose
// province part is not 00 (GB/T 2260).
func checkRegion(code string) error {
	if len(code) != 6 || !digitsRE.MatchString(code) || code[:2] == "00" {
		return fmt.Errorf("%w: regionCode %q: want the district's 6-digit administrative code (GB/T 2260, e.g. 310104)", errs.InvalidInput, code)
	}
	return nil
}

// checkRuleRegion refuses a rule's region code that is not "*", a
// province's 2 digits, a city's 4 or a district's 6.
func checkRuleRegion(code string) error {
	if code == "*" {
		return nil
	}
	if n := len(code); (n != 2 && n != 4 && n != 6) || !digitsRE.MatchString(code) || code[:2] == "00" {
		return fmt.Errorf("%w: region code %q: want \"*\", or 2 (province), 4 (city) or 6 (district) digits", errs.InvalidInput, code)
	}
	return nil
}

// text checks a required field of 1 to max characters, trimmed.
func text(what, v string, max int) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" || utf8.RuneCountInString(v) > max {
		return "", fmt.Errorf("%w: %s: 1 to %d characters", errs.InvalidInput, what, max)
	}
	return v, nil
}

// check validates and trims an address as a customer wrote it.
func (a OrderAddress) check() (OrderAddress, error) {
	var err error
	for _, f := range []struct {
		what string
		v    *string
		max  int
	}{{"name", &a.Name, 64}, {"province", &a.Province, 32}, {"city", &a.City, 32}, {"district", &a.District, 32}, {"line", &a.Line, 120}} {
		if *f.v, err = text(f.what, *f.v, f.max); err != nil {
			return a, err
		}
	}
	a.Phone = strings.TrimSpace(a.Phone)
	if !phoneRE.MatchString(a.Phone) {
		return a, fmt.Errorf("%w: phone %q: 3 to 19 digits, optionally after a +", errs.InvalidInput, a.Phone)
	}
	if err := checkRegion(a.RegionCode); err != nil {
		return a, err
	}
	a.PostalCode = strings.TrimSpace(a.PostalCode)
	if a.PostalCode != "" && !postalRE.MatchString(a.PostalCode) {
		return a, fmt.Errorf("%w: postalCode %q: 3 to 10 letters, digits, spaces or dashes", errs.InvalidInput, a.PostalCode)
	}
	return a, nil
}
