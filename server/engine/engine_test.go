package engine_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/engine"
	"github.com/scopehygiene/scope-hygiene/server/freetier"
)

// TestPreparedCaller: the caller member read from the one decode is what freetier.CallerFromBody
// reads from the body, for every shape of the member.
func TestPreparedCaller(t *testing.T) {
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	e := engine.Engine{PS: ps}
	for name, caller := range map[string]any{
		"absent": nil, "null": json.RawMessage("null"), "number": 7, "object": map[string]any{"a": 1},
		"not base58": "not-a-key-0OIl", "empty": "", "valid": "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
		"escaped": json.RawMessage(`"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWW\u004d"`),
	} {
		t.Run(name, func(t *testing.T) {
			m := map[string]any{"family": "mem0", "form": "full_text",
				"records": []any{map[string]any{"id": "r1", "content_text": "x", "user_id": "u"}}}
			if name != "absent" {
				m["caller"] = caller
			}
			body, _ := json.Marshal(m)
			p, ref, err := e.Prepare(body)
			if err != nil || ref != nil {
				t.Fatalf("prepare: %v %v", err, ref)
			}
			got, gotErr := p.Caller()
			want, wantErr := freetier.CallerFromBody(body)
			if got != want || (gotErr == nil) != (wantErr == nil) || (wantErr != nil && !errors.Is(gotErr, freetier.ErrInvalidCaller) && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("Caller() = %q, %v; CallerFromBody = %q, %v", got, gotErr, want, wantErr)
			}
			if (name == "valid" || name == "escaped") != (got != "") {
				t.Fatalf("Caller() = %q for the %s case", got, name)
			}
		})
	}
}
