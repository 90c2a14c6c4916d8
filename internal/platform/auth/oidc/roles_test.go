package oidc

import (
	"encoding/json"
	"testing"
)

// The role claims of the providers docs/auth.md names, as their tokens
// carry them.
func TestRoles(t *testing.T) {
	for _, tc := range []struct {
		name, claims, path string
		admin              bool
	}{
		{"Keycloak realm role", `{"realm_access":{"roles":["offline_access","admin"]}}`, "realm_access.roles", true},
		{"Keycloak realm, no admin", `{"realm_access":{"roles":["offline_access"]}}`, "realm_access.roles", false},
		{"Keycloak client role, a dotted client id", `{"resource_access":{"shop.example.com":{"roles":["admin"]}}}`, "resource_access.shop.example.com.roles", true},
		{"Auth0 namespaced claim", `{"https://shop.example.com/roles":["admin"]}`, "https://shop.example.com/roles", true},
		{"Cognito groups", `{"cognito:groups":["admin","staff"]}`, "cognito:groups", true},
		{"Zitadel project roles", `{"urn:zitadel:iam:org:project:roles":{"admin":{"2310":"shop.zitadel.cloud"}}}`, "urn:zitadel:iam:org:project:roles", true},
		{"one role as a string", `{"roles":"admin"}`, "roles", true},
		{"roles separated by spaces", `{"roles":"staff admin"}`, "roles", true},
		{"a longer name is not the role", `{"roles":["administrator"]}`, "roles", false},
		{"a substring is not the role", `{"roles":"administrator"}`, "roles", false},
		{"no such claim", `{"groups":["admin"]}`, "roles", false},
		{"the path ends in an object", `{"realm_access":{"roles":["admin"]}}`, "realm_access", false},
		{"a number", `{"roles":1}`, "roles", false},
		{"not strings", `{"roles":[1,{"admin":true}]}`, "roles", false},
	} {
		var c map[string]any
		if err := json.Unmarshal([]byte(tc.claims), &c); err != nil {
			t.Fatal(err)
		}
		if got := hasRole(claimAt(c, tc.path), "admin"); got != tc.admin {
			t.Errorf("%s: admin = %v, want %v", tc.name, got, tc.admin)
		}
	}
}
