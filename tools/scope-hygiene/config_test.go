package main

import (
	"flag"
	"io"
	"testing"
	"time"
)

func TestServeFlagsPrecedence(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    config
		wantErr bool
	}{
		{"defaults", nil, nil, config{Addr: "127.0.0.1:8080", Store: "sqlite:var/scope-hygiene.db", KeyFile: "var/signing-key.pem",
			RequestTimeout: 10 * time.Second, ShutdownTimeout: 15 * time.Second, LogLevel: "info", ProofKeyFile: "var/siwx.key", ProofBudget: 30, MaxInflightAudits: 64, MaxInflightPrechecks: 32, BodyBudgetMB: 64, BodyTimeout: 5 * time.Second,
			HouseTokenFailuresPerMinute: 6, HouseTokenFailureBurst: 6, UnpaidAuditsPerMinute: 120, UnpaidAuditBurst: 60, StoreRetryAfter: 5 * time.Second}, false},
		{"env", map[string]string{"SCOPE_HYGIENE_ADDR": ":9", "SCOPE_HYGIENE_TRUST_PROXY": "true", "SCOPE_HYGIENE_REQUEST_TIMEOUT": "3s",
			"SCOPE_HYGIENE_HOUSE_TOKEN": "tok"}, nil,
			config{Addr: ":9", Store: "sqlite:var/scope-hygiene.db", KeyFile: "var/signing-key.pem", TrustProxy: true, HouseToken: "tok",
				RequestTimeout: 3 * time.Second, ShutdownTimeout: 15 * time.Second, LogLevel: "info", ProofKeyFile: "var/siwx.key", ProofBudget: 30, MaxInflightAudits: 64, MaxInflightPrechecks: 32, BodyBudgetMB: 64, BodyTimeout: 5 * time.Second,
				HouseTokenFailuresPerMinute: 6, HouseTokenFailureBurst: 6, UnpaidAuditsPerMinute: 120, UnpaidAuditBurst: 60, StoreRetryAfter: 5 * time.Second}, false},
		{"flag wins", map[string]string{"SCOPE_HYGIENE_ADDR": ":9"}, []string{"-addr", ":10", "-store", "postgres://x"},
			config{Addr: ":10", Store: "postgres://x", KeyFile: "var/signing-key.pem",
				RequestTimeout: 10 * time.Second, ShutdownTimeout: 15 * time.Second, LogLevel: "info", ProofKeyFile: "var/siwx.key", ProofBudget: 30, MaxInflightAudits: 64, MaxInflightPrechecks: 32, BodyBudgetMB: 64, BodyTimeout: 5 * time.Second,
				HouseTokenFailuresPerMinute: 6, HouseTokenFailureBurst: 6, UnpaidAuditsPerMinute: 120, UnpaidAuditBurst: 60, StoreRetryAfter: 5 * time.Second}, false},
		{"bad env duration", map[string]string{"SCOPE_HYGIENE_SHUTDOWN_TIMEOUT": "soon"}, nil, config{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c config
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			err := serveFlags(fs, &c, func(k string) string { return tc.env[k] })
			if tc.wantErr {
				if err == nil {
					t.Fatal("accepted")
				}
				return
			}
			if err != nil || fs.Parse(tc.args) != nil {
				t.Fatal(err)
			}
			var zero config
			c.Pay = zero.Pay // the x402 flags have their own tests
			if c != tc.want {
				t.Fatalf("config %+v, want %+v", c, tc.want)
			}
		})
	}
}
