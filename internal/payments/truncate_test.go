package payments

import (
	"testing"
	"unicode/utf8"
)

func TestTruncateKeepsUTF8(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"基本账户余额不足", 7, "基本"}, // 3 bytes a character: never half of one
		{"NOT_ENOUGH", 64, "NOT_ENOUGH"},
		{"a\x00b\xffc", 64, "ab?c"},
	} {
		got := truncate(tc.in, tc.n)
		if got != tc.want || !utf8.ValidString(got) || len(got) > tc.n {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
