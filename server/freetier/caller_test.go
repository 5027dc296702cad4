package freetier

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"
	"time"
)

func TestParseCaller(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"system program (all zero)", "11111111111111111111111111111111", true},
		{"token program", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", true},
		{"usdc mint", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", true},
		{"empty", "", false},
		{"too short", "1111111111111111111111111111111", false},
		{"extra leading 1", "111111111111111111111111111111111", false},
		{"invalid char 0", "0PjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", false},
		{"invalid char l", "lPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", false},
		{"too long", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1vv", false},
		{"33 bytes in 44 chars", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", false},
		{"non-ascii", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1é", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := ParseCaller(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("ParseCaller(%q) err = %v, want ok=%v", tc.in, err, tc.ok)
			}
			if tc.ok && EncodeCaller(k) != tc.in {
				t.Fatalf("round trip: %q -> %q", tc.in, EncodeCaller(k))
			}
		})
	}
}

func TestParseCallerRoundTripRandom(t *testing.T) {
	for i := 0; i < 2000; i++ {
		var k [32]byte
		rand.Read(k[:])
		if i%7 == 0 {
			k[0], k[1] = 0, 0
		}
		s := EncodeCaller(k)
		got, err := ParseCaller(s)
		if err != nil || got != k {
			t.Fatalf("%x -> %q -> %x, %v", k, s, got, err)
		}
	}
}

func TestCallerFromBody(t *testing.T) {
	const key = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	tests := []struct {
		name string
		body string
		want string
		err  error
	}{
		{"present", `{"family":"mem0","caller":"` + key + `"}`, key, nil},
		{"absent", `{"family":"mem0"}`, "", nil},
		{"null", `{"caller":null}`, "", nil},
		{"name is exact", `{"Caller":"nope"}`, "", nil},
		{"not json", `nope`, "", nil},
		{"array body", `["caller"]`, "", nil},
		{"number", `{"caller":5}`, "", ErrInvalidCaller},
		{"not base58", `{"caller":"0OIl"}`, "", ErrInvalidCaller},
		{"empty", `{"caller":""}`, "", ErrInvalidCaller},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CallerFromBody([]byte(tc.body))
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Fatalf("CallerFromBody = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestKeyAndRetryAfter(t *testing.T) {
	if Key("w", "") == Key("", "w") {
		t.Fatal("wallet and address keys collide")
	}
	if len(Key("", "203.0.113.9")) != 64 {
		t.Fatal("key is not a hex digest")
	}
	for _, tc := range []struct {
		d    time.Duration
		want int
	}{{time.Millisecond, 1}, {time.Second, 1}, {1001 * time.Millisecond, 2}, {4999 * time.Millisecond, 5}, {0, 1}} {
		if got := RetryAfterSeconds(tc.d); got != tc.want {
			t.Errorf("RetryAfterSeconds(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

func FuzzParseCaller(f *testing.F) {
	for _, s := range []string{"11111111111111111111111111111111", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "", "0", "zzzz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseCaller(s)
		if err != nil {
			return
		}
		if EncodeCaller(k) != s {
			t.Fatalf("accepted non-canonical %q (canonical %q)", s, EncodeCaller(k))
		}
	})
}

func FuzzCallerFromBody(f *testing.F) {
	f.Add([]byte(`{"caller":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"}`))
	f.Add([]byte(`{"caller":null,"records":[]}`))
	f.Add([]byte(`{"caller":"x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := CallerFromBody(body)
		if err != nil {
			if got != "" || err.Error() != ErrInvalidCaller.Error() {
				t.Fatalf("error path leaks: %q %v", got, err)
			}
			return
		}
		if got != "" {
			if _, err := ParseCaller(got); err != nil || !bytes.Contains(body, []byte(got)) && !bytes.Contains(body, []byte(`\u`)) {
				t.Fatalf("returned caller %q not a key from the body", got)
			}
		}
	})
}
