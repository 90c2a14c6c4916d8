package money

import (
	"bytes"
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Money
	}{
		{"89.00", 8900}, {"89", 8900}, {"89.5", 8950}, {"0.01", 1}, {"-1.20", -120}, {"129.99", 12999},
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v, want %d", tc.in, got, err, tc.want)
		}
	}
	// White space is refused wherever it stands (issue 25: " 1.00" was 1.00).
	for _, bad := range []string{"", "1.234", "abc", "1.", ".5", "1e3", "--1", "1,00", "9999999999999999", " 1.00", "1.00 ", "\t1", "1.00\n", " ", "- 1", "-"} {
		if _, err := Parse(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) error = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestStringAndGQL(t *testing.T) {
	for _, tc := range []struct {
		in   Money
		want string
	}{{8900, "89.00"}, {1, "0.01"}, {-120, "-1.20"}, {0, "0.00"}} {
		if got := tc.in.String(); got != tc.want {
			t.Errorf("Money(%d).String() = %q, want %q", tc.in, got, tc.want)
		}
		var buf bytes.Buffer
		tc.in.MarshalGQL(&buf)
		if buf.String() != `"`+tc.want+`"` {
			t.Errorf("MarshalGQL(%d) = %s", tc.in, buf.String())
		}
	}
	var m Money
	if err := m.UnmarshalGQL(89.0); err == nil {
		t.Error("UnmarshalGQL(float) succeeded; floats must be refused")
	}
	if err := m.UnmarshalGQL("12.30"); err != nil || m != 1230 {
		t.Errorf("UnmarshalGQL(\"12.30\") = %d, %v", m, err)
	}
}
