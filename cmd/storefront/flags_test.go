package main

import (
	"bufio"
	"io"
	"log/slog"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
)

// capturedFlag is one flag of testdata/flags-before-kong.txt, the help
// the flag package printed for every command before the configuration
// moved to kong.
type capturedFlag struct {
	typ, env, def string
}

var (
	flagLine = regexp.MustCompile(`^  -([a-z0-9-]+)(?: (\w+))?$`)
	envIn    = regexp.MustCompile(`\((STOREFRONT_[A-Z0-9_]+)\)`)
	defIn    = regexp.MustCompile(`\(default ("[^"]*"|[^()]*)\)$`)
)

// captured reads the testdata: command → flag name → its type word, its
// variable and its default as the flag package printed them.
func captured(t *testing.T) map[string]map[string]capturedFlag {
	t.Helper()
	f, err := os.Open("testdata/flags-before-kong.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]capturedFlag{}
	var cmd, name string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if c, ok := strings.CutPrefix(l, "== "); ok {
			cmd, out[c] = c, map[string]capturedFlag{}
			continue
		}
		if m := flagLine.FindStringSubmatch(l); m != nil {
			name = m[1]
			out[cmd][name] = capturedFlag{typ: m[2]}
			continue
		}
		if help, ok := strings.CutPrefix(l, "    \t"); ok {
			c := out[cmd][name]
			if m := envIn.FindStringSubmatch(help); m != nil {
				c.env = m[1]
			}
			if m := defIn.FindStringSubmatch(help); m != nil {
				c.def = m[1]
				if u, err := strconv.Unquote(c.def); err == nil {
					c.def = u
				}
			}
			out[cmd][name] = c
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// envOnly are the variables read without a flag of their own before kong
// (so not in the captured help), by command: each must still be read there.
var envOnly = map[string][]string{
	"serve":         {"STOREFRONT_JWT_SECRET", "STOREFRONT_PAYMENT_PROVIDERS", "STOREFRONT_MOCK_PAYMENT_SECRET"},
	"close-expired": {"STOREFRONT_PAYMENT_PROVIDERS"},
	"token":         {"STOREFRONT_JWT_SECRET", "STOREFRONT_LOG_LEVEL"},
	"notify":        {"STOREFRONT_NOTIFY_URL", "STOREFRONT_MOCK_PAYMENT_SECRET", "STOREFRONT_LOG_LEVEL"},
	"migrate":       {"STOREFRONT_LOG_LEVEL"},
	"seed-demo":     {"STOREFRONT_LOG_LEVEL"},
	"reconcile":     {"STOREFRONT_LOG_LEVEL"},
	"seed-bench":    {"STOREFRONT_LOG_LEVEL"},
}

// added are flags that exist now and did not before: --log-level, which
// every command read as STOREFRONT_LOG_LEVEL, is a flag of each.
var added = map[string]bool{"log-level": true}

// commandFlags are a command's flags with its parents' (the root's
// --log-level), by name.
func commandFlags(t *testing.T, k *kong.Kong, cmd string) map[string]*kong.Flag {
	t.Helper()
	out := map[string]*kong.Flag{}
	for _, f := range k.Model.Flags {
		out[f.Name] = f
	}
	for _, n := range k.Model.Children {
		if n.Name == cmd {
			for _, f := range n.Flags {
				out[f.Name] = f
			}
			return out
		}
	}
	t.Fatalf("no command %s", cmd)
	return nil
}

// typeWord is the word the flag package printed for a value of t.
func typeWord(t reflect.Type) string {
	switch {
	case t == reflect.TypeOf(time.Duration(0)):
		return "duration"
	case t == reflect.TypeOf(slog.Level(0)):
		return "value"
	case t.Kind() == reflect.Bool, t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Bool:
		return ""
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64:
		return "int"
	case t.Kind() == reflect.Uint64:
		return "uint"
	case t.Kind() == reflect.Float64:
		return "float"
	}
	return t.Kind().String()
}

// canonical is a default as a value of t would print it, "" for the zero
// value (which the flag package did not print).
func canonical(t *testing.T, typ reflect.Type, s string) string {
	t.Helper()
	var v string
	switch typ {
	case reflect.TypeOf(time.Duration(0)):
		if s == "" {
			return ""
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("default %q: %v", s, err)
		}
		v = d.String()
	case reflect.TypeOf(slog.Level(0)):
		var l slog.Level
		if err := l.UnmarshalText([]byte(s)); err != nil {
			t.Fatalf("default %q: %v", s, err)
		}
		v = l.String()
	default:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			v = strconv.FormatFloat(f, 'g', -1, 64)
		} else {
			v = s
		}
	}
	switch v {
	case "0", "0s", "false":
		return ""
	}
	return v
}

// Every flag of every command keeps its name, its variable, its type and
// its default, and every variable read without a flag is still read; a
// flag that was not there is one of added, hidden (a variable only) or a
// provider's.
func TestFlagsKeepTheirNamesVariablesAndDefaults(t *testing.T) {
	before := captured(t)
	if len(before) != 8 || len(before["serve"]) < 80 {
		t.Fatalf("testdata: %d commands, serve with %d flags", len(before), len(before["serve"]))
	}
	c := newCLI()
	k, err := newParser(c, io.Discard, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	// A provider's flags are its package's to add (a test registers one).
	provided := func(f *kong.Flag) bool {
		at := f.Target.Addr().Pointer()
		for _, s := range append(c.Serve.Pay.Providers.Plugins, c.CloseExpired.Pay.Providers.Plugins...) {
			v := reflect.ValueOf(s)
			if at >= v.Pointer() && at < v.Pointer()+v.Elem().Type().Size() {
				return true
			}
		}
		return false
	}
	for cmd, flags := range before {
		now := commandFlags(t, k, cmd)
		for name, was := range flags {
			f, ok := now[name]
			if !ok {
				t.Errorf("%s --%s: gone", cmd, name)
				continue
			}
			env := ""
			if len(f.Tag.Envs) > 0 {
				env = f.Tag.Envs[0]
			}
			if env != was.env && !(was.env == "" && slices.Contains(envOnly[cmd], env)) {
				t.Errorf("%s --%s: variable %q, was %q", cmd, name, env, was.env)
			}
			typ := f.Target.Type()
			if w := typeWord(typ); w != was.typ {
				t.Errorf("%s --%s: a %s, was a %s", cmd, name, w, was.typ)
			}
			if def, want := canonical(t, typ, f.Default), canonical(t, typ, was.def); def != want {
				t.Errorf("%s --%s: default %q, was %q", cmd, name, def, want)
			}
		}
		for name, f := range now {
			if _, ok := flags[name]; !ok && !added[name] && !f.Hidden && name != "help" && !provided(f) {
				t.Errorf("%s --%s: a new flag (add it to added, or to the testdata with a reason)", cmd, name)
			}
		}
		for _, env := range envOnly[cmd] {
			found := false
			for _, f := range now {
				found = found || slices.Contains(f.Tag.Envs, env)
			}
			if !found {
				t.Errorf("%s: %s is no longer read", cmd, env)
			}
		}
	}
}
