package store

import (
	"strings"
	"testing"
)

// Every MySQL pool parses times, reads them as UTC and sends them as UTC to
// the microsecond (DATETIME(6)), whatever the DSN given says.
func TestMySQLConfigTimes(t *testing.T) {
	for _, dsn := range []string{"root@tcp(127.0.0.1:3306)/shop", "root@tcp(127.0.0.1:3306)/shop?parseTime=false&loc=Local&timeTruncate=1s"} {
		cfg, err := mysqlConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		got := cfg.FormatDSN()
		for _, want := range []string{"parseTime=true", "timeTruncate=1µs"} {
			if !strings.Contains(got, want) {
				t.Errorf("mysqlConfig(%q) = %s, want %s", dsn, got, want)
			}
		}
		if !cfg.ParseTime || cfg.Loc.String() != "UTC" {
			t.Errorf("mysqlConfig(%q): parseTime %v, loc %v, want true, UTC", dsn, cfg.ParseTime, cfg.Loc)
		}
	}
}
