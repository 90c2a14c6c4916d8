package input

import (
	"errors"
	"strings"
	"testing"

	"storefront/internal/vocab/errs"
)

func TestCheck(t *testing.T) {
	lines := Rule{Max: 10, Lines: true}
	for _, tc := range []struct {
		s    string
		r    Rule
		want string // a word of the reason; "" = accepted
	}{
		{"demo-tshirt", Default, ""},
		{"纯棉圆领T恤", Default, ""},
		{"", Default, ""},
		{"demo\x00tshirt", Default, "U+0000"},
		{"a\x1bb", Default, "U+001B"},
		{"a\x7fb", Default, "U+007F"},
		{"a\u0085b", Default, "U+0085"},    // C1: NEL
		{"a\u2028b", Default, ""},          // line separator: text, not a control
		{"a\xe9b", Default, "UTF-8"},       // a Latin-1 é
		{"\xed\xa0\x80", Default, "UTF-8"}, // an encoded surrogate
		{"a\nb", Default, "U+000A"},
		{"a\nb\r\n\tc", lines, ""},
		{"a\x00b", lines, "U+0000"},
		{strings.Repeat("é", 10), lines, ""},
		{strings.Repeat("é", 11), lines, "11 characters"},
		{strings.Repeat("a", 255), KeyRule, ""},
		{strings.Repeat("a", 256), KeyRule, "256 bytes"},
		{strings.Repeat("é", 128), KeyRule, "256 bytes"},
		{strings.Repeat("é", 255), Default, ""},
		{strings.Repeat("é", 256), Default, "256 characters"},
	} {
		got := Check(tc.s, tc.r)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("Check(%q, %+v) = %q, want %q", tc.s, tc.r, got, tc.want)
		}
	}
}

func TestFieldIsInvalidInput(t *testing.T) {
	err := Key("Idempotency-Key header", "k\x00")
	var ie *Error
	if !errors.Is(err, errs.InvalidInput) || !errors.As(err, &ie) || ie.Field != "Idempotency-Key header" {
		t.Errorf("Key: %v", err)
	}
	if err := Field("x", "fine", Default); err != nil {
		t.Errorf("Field: %v", err)
	}
}

func BenchmarkCheck(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if Check("demo-tshirt-black-xl", Default) != "" {
			b.Fatal("refused")
		}
	}
}
