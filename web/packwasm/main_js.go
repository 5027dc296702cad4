//go:build js && wasm

package main

import (
	"encoding/json"
	"syscall/js"

	"github.com/scopehygiene/scope-hygiene/web/internal/logmask"
)

// main publishes globalThis.scopeHygiene and keeps the module alive for the page's calls.
func main() {
	api := js.Global().Get("Object").New()
	api.Set("pack", js.FuncOf(jsPack))
	api.Set("signedMessage", js.FuncOf(jsSignedMessage))
	api.Set("publishedKey", js.FuncOf(jsPublishedKey))
	api.Set("maskLog", js.FuncOf(jsMaskLog))
	js.Global().Set("scopeHygiene", api)
	js.Global().Call("dispatchEvent", js.Global().Get("Event").New("scope-hygiene-ready"))
	select {}
}

func bytesOf(v js.Value) []byte {
	b := make([]byte, v.Get("length").Int())
	js.CopyBytesToGo(b, v)
	return b
}

func uint8(b []byte) js.Value {
	a := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(a, b)
	return a
}

func failure(err error) js.Value {
	o := js.Global().Get("Object").New()
	o.Set("error", err.Error())
	return o
}

// jsPack(source, fileName, bytes, hashOnly) → {body, records, form, notes, counts} | {error}.
func jsPack(_ js.Value, args []js.Value) any {
	p, err := convert(args[0].String(), args[1].String(), bytesOf(args[2]), args[3].Bool())
	if err != nil {
		return failure(err)
	}
	o := js.Global().Get("Object").New()
	o.Set("body", uint8(p.Body))
	o.Set("records", p.Records)
	o.Set("form", p.Form)
	inv, err := json.Marshal(struct {
		Notes   []string       `json:"notes"`
		Counts  map[string]int `json:"counts"`
		Dropped map[string]int `json:"dropped"`
		Derived any            `json:"derived"`
		Absent  any            `json:"absent"`
		ByClass map[string]int `json:"by_class"`
		Unres   map[string]int `json:"unresolved"`
	}{p.Inventory.Notes, p.Inventory.Counts, p.Inventory.Fields.Dropped, p.Inventory.Fields.Derived, p.Inventory.Absent, p.Inventory.Records.ByClass, p.Inventory.Unresolv})
	if err == nil {
		o.Set("inventory", string(inv))
	}
	return o
}

// jsSignedMessage(bytes) → {keyId, message, signature} | {error}.
func jsSignedMessage(_ js.Value, args []js.Value) any {
	c, err := signedMessage(bytesOf(args[0]))
	if err != nil {
		return failure(err)
	}
	o := js.Global().Get("Object").New()
	o.Set("keyId", c.KeyID)
	o.Set("message", uint8(c.Message))
	o.Set("signature", uint8(c.Signature))
	return o
}

// jsPublishedKey(criteriaBytes) → {keyId, publicKey} | {error}.
func jsPublishedKey(_ js.Value, args []js.Value) any {
	pub, id, err := publishedKey(bytesOf(args[0]))
	if err != nil {
		return failure(err)
	}
	o := js.Global().Get("Object").New()
	o.Set("keyId", id)
	o.Set("publicKey", uint8(pub))
	return o
}

// jsMaskLog(bytes, salt) → {body, events, masked, dropped, labels} | {error}: a mutation log with
// every identifier a salted pseudonym (package logmask).
func jsMaskLog(_ js.Value, args []js.Value) any {
	body, sum, err := logmask.Mask(bytesOf(args[0]), bytesOf(args[1]))
	if err != nil {
		return failure(err)
	}
	o := js.Global().Get("Object").New()
	o.Set("body", uint8(body))
	o.Set("events", sum.Events)
	o.Set("masked", sum.Masked)
	o.Set("dropped", sum.Dropped)
	o.Set("labels", sum.ScopeLabels)
	return o
}
