package main

import "testing"

// TestRoutePrefix: a served criteria's routes come from the endpoints it publishes (FE-R endpoints
// block of criteria/forget-envelope.yaml), never from its file name.
func TestRoutePrefix(t *testing.T) {
	for _, tc := range []struct {
		name      string
		endpoints map[string]string
		want      string
	}{
		{"published-routes", map[string]string{"precheck": "POST /v1/forget-envelope/precheck (free)", "audit": "POST /v1/forget-envelope/audit (free)"}, "/v1/forget-envelope"},
		{"different-prefixes", map[string]string{"precheck": "POST /v1/a/precheck", "audit": "POST /v1/b/audit"}, ""},
		{"audit-not-post", map[string]string{"precheck": "POST /v1/a/precheck", "audit": "GET /v1/a/audit"}, ""},
		{"precheck-missing", map[string]string{"audit": "POST /v1/a/audit"}, ""},
		{"root-prefix", map[string]string{"precheck": "POST /precheck", "audit": "POST /audit"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := routePrefix(tc.endpoints)
			if (err == nil) != (tc.want != "") || got != tc.want {
				t.Fatalf("routePrefix = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
