package server

import "net/http"

// graphqlFirst serves /graphql, the route nearly every request takes, with
// its handler directly, and everything else through mux. For that path the
// mux would pick the same handler (no other pattern matches it, and a
// clean path needs no redirect); asking it costs the path's cleaning and
// its pattern tree's walk on every request.
func graphqlFirst(gql, mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/graphql" && r.Method != http.MethodConnect {
			gql.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}
