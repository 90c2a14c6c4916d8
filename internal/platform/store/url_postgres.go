package store

import (
	"net"
	"net/url"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// PostgresURL is cfg's server and user with database name, as a URL (the
// form --db takes after "postgres:"); a socket's directory goes in the
// query, as libpq reads it.
func PostgresURL(cfg *pgx.ConnConfig, name string) string {
	u := url.URL{Scheme: "postgres", Path: "/" + name, RawQuery: "sslmode=disable"}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	} else {
		u.User = url.User(cfg.User)
	}
	if cfg.Host == "" || cfg.Host[0] == '/' {
		u.Host = "localhost"
		u.RawQuery += "&host=" + url.QueryEscape(cfg.Host) + "&port=" + strconv.Itoa(int(cfg.Port))
	} else {
		u.Host = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	}
	return u.String()
}
