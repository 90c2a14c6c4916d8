package providers

import (
	"fmt"
	"os"
	"reflect"

	"github.com/alecthomas/kong"

	"storefront/internal/payments"
)

// Flags are every registered provider's settings, fresh, for one command:
// embedded in the command's kong struct (`embed:""`), their flags are the
// command's.
type Flags struct {
	kong.Plugins
	names []string
}

// NewFlags returns one fresh Settings per registered provider.
func NewFlags() Flags {
	f := Flags{names: Names()}
	for _, n := range f.names {
		s := settingsOf(n)
		if v := reflect.ValueOf(s); v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			panic(fmt.Sprintf("providers: %q's settings are a %T, want a pointer to a struct", n, s))
		}
		f.Plugins = append(f.Plugins, s)
	}
	return f
}

// Providers returns every provider the parsed flags switch on, validated;
// kctx is the parse that filled them (what was given), env what all share
// (its Given is set here, per provider).
func (f Flags) Providers(kctx *kong.Context, env Env) ([]payments.Provider, error) {
	var out []payments.Provider
	seen := map[string]bool{}
	for i, s := range f.Plugins {
		env.Given = given(kctx, s)
		ps, err := s.(Settings).Build(env)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if p == nil {
				return nil, fmt.Errorf("providers: %q built a nil provider", f.names[i])
			}
			if seen[p.Name()] {
				return nil, fmt.Errorf("payment provider %q is configured twice", p.Name())
			}
			seen[p.Name()] = true
		}
		out = append(out, ps...)
	}
	return out, nil
}

// given reports whether a flag of settings (a pointer to a struct) was
// given on the command line or by its environment variable. A flag is the
// settings' when the field it fills lies inside the struct.
func given(kctx *kong.Context, settings any) bool {
	v := reflect.ValueOf(settings)
	from, size := v.Pointer(), v.Elem().Type().Size()
	onLine := map[*kong.Flag]bool{}
	for _, p := range kctx.Path {
		if p.Flag != nil {
			onLine[p.Flag] = true
		}
	}
	for _, fl := range kctx.Flags() {
		if !fl.Target.CanAddr() {
			continue
		}
		if at := fl.Target.Addr().Pointer(); at < from || at >= from+size {
			continue
		}
		if onLine[fl] {
			return true
		}
		for _, e := range fl.Tag.Envs {
			if _, ok := os.LookupEnv(e); ok {
				return true
			}
		}
	}
	return false
}
