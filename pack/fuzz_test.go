package pack

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// Fuzz targets for every parser of untrusted input: none may panic, and whatever Pack accepts
// must marshal into a submission that satisfies the published input contract.

func seed(f *testing.F, paths ...string) []byte {
	var out []byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = b
	}
	return out
}

func FuzzDecodeAF(f *testing.F) {
	f.Add(seed(f, td("letta-af/team.af")))
	f.Add(seed(f, td("letta-af/solo.af")))
	f.Add([]byte(`"{\"agents\": []}"`))
	f.Add([]byte(`"\"{}\""`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = DecodeAF(data)
	})
}

func FuzzReadItems(f *testing.F) {
	f.Add(seed(f, td("mem0-platform/page1.json")))
	f.Add(seed(f, td("mem0-oss/history.jsonl")))
	f.Add([]byte(`{"results": [1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = readItems(File{Name: "f", Data: data}, "results", "edges")
		_, _, _ = readItems(File{Name: "f", Data: data})
	})
}

// FuzzSourceBytes: every location readItems reports leads SourceBytes to bytes that decode to
// the very item read.
func FuzzSourceBytes(f *testing.F) {
	f.Add(seed(f, td("mem0-platform/page1.json")))
	f.Add(seed(f, td("mem0-oss/history.jsonl")))
	f.Add([]byte(`[{"a":1},{"b":[2]}]`))
	f.Add([]byte(`{"results":[{"x":"\ud800"}],"next":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		items, env, err := readItems(File{Name: "f", Data: data}, "results", "edges")
		if err != nil {
			return
		}
		if len(env.Locs) != len(items) {
			t.Fatalf("%d locations for %d items", len(env.Locs), len(items))
		}
		c := NewSourceCache(data)
		for i, loc := range env.Locs {
			b, ok := c.At(loc)
			if !ok {
				t.Fatalf("item %d at %q not found", i, loc)
			}
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			var v map[string]any
			if err := dec.Decode(&v); err != nil || !reflect.DeepEqual(v, items[i]) {
				t.Fatalf("item %d at %q: the bytes found are another value", i, loc)
			}
		}
		_, _ = SourceBytes(data, "/0/x/1")
		_, _ = SourceBytes(data, "jsonl:2")
	})
}

// FuzzReplacedChars: when no replacement is counted (and the input holds no U+FFFD of its
// own), no decoded string holds U+FFFD.
func FuzzReplacedChars(f *testing.F) {
	f.Add([]byte(`["a\ud800b"]`))
	f.Add([]byte("[\"\xff\"]"))
	f.Add([]byte(`["\ud83d\ude00"]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := replacedChars(data)
		v, err := decodeValue(data)
		if err != nil || n > 0 || bytes.Contains(data, []byte("\xef\xbf\xbd")) || bytes.Contains(bytes.ToLower(data), []byte(`\ufffd`)) {
			return
		}
		var walk func(any)
		walk = func(x any) {
			switch t2 := x.(type) {
			case string:
				if strings.ContainsRune(t2, '\uFFFD') {
					t.Fatalf("a replacement went uncounted in %q", data)
				}
			case []any:
				for _, y := range t2 {
					walk(y)
				}
			case map[string]any:
				for k, y := range t2 {
					walk(k)
					walk(y)
				}
			}
		}
		walk(v)
	})
}
