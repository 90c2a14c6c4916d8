package oidc

import (
	"slices"
	"strings"
)

// claimAt is the claim at path: a claim of that exact name if there is one
// (Auth0's custom claims are URLs, dots and all), otherwise the path read as
// dotted steps into nested objects (Keycloak's realm_access.roles), where
// each step may itself hold dots (resource_access.my.client.roles).
func claimAt(claims map[string]any, path string) any {
	if v, ok := claims[path]; ok {
		return v
	}
	for i := range len(path) {
		if path[i] != '.' {
			continue
		}
		if inner, ok := claims[path[:i]].(map[string]any); ok {
			if v := claimAt(inner, path[i+1:]); v != nil {
				return v
			}
		}
	}
	return nil
}

// hasRole reports whether a role claim holds role, in any of the shapes
// providers give it: a list of names (Keycloak, Auth0, Cognito's groups),
// one name or several separated by spaces, or an object whose keys are the
// roles (Zitadel's urn:zitadel:iam:org:project:roles).
func hasRole(claim any, role string) bool {
	switch v := claim.(type) {
	case []any:
		return slices.ContainsFunc(v, func(e any) bool { s, ok := e.(string); return ok && s == role })
	case string:
		return slices.Contains(strings.Fields(v), role)
	case map[string]any:
		_, ok := v[role]
		return ok
	}
	return false
}
