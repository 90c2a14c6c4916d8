package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// freshPostgres creates an empty database on the PostgreSQL server of dsn
// (a libpq URL or key=value) and returns its store spec and a cleanup that
// drops it, its connections with it.
func freshPostgres(dsn string) (string, string, func(), error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", "", nil, fmt.Errorf("-db postgres: %w", err)
	}
	admin := stdlib.OpenDB(*cfg)
	name := fmt.Sprintf("sfbench_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		admin.Close()
		return "", "", nil, err
	}
	cleanup := func() {
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close()
	}
	u := url.URL{Scheme: "postgres", Path: "/" + name, RawQuery: "sslmode=disable"}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	} else {
		u.User = url.User(cfg.User)
	}
	if cfg.Host == "" || cfg.Host[0] == '/' { // a socket: name its directory
		u.Host = "localhost"
		u.RawQuery += "&host=" + url.QueryEscape(cfg.Host) + "&port=" + strconv.Itoa(int(cfg.Port))
	} else {
		u.Host = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	}
	return "postgres:" + u.String(), "", cleanup, nil
}
