package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The browser suite drives Debian's chromium with chromedp against the real binary over
// loopback. scripts/test.sh sets SCOPE_HYGIENE_REQUIRE_BROWSER=1, so there a missing browser
// fails instead of skipping.

const (
	houseToken = "browser-suite-house-token-0123456789abcdef"
	canaryA    = "canary-heron-prefers-oolong-5521"
	canaryB    = "canary-heron-lives-in-tromso-8830"
)

// sample is a full-text export whose content must never leave the browser in hash-only form.
var sample = `{"family":"mem0","form":"full_text","records":[` +
	`{"id":"r1","content_text":"` + canaryA + `","user_id":"alice"},` +
	`{"id":"r2","content_text":"` + canaryA + `","user_id":"bob"},` +
	`{"id":"r3","content_text":"` + canaryB + `","user_id":"alice"}]}`

func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SCOPE_HYGIENE_REQUIRE_BROWSER") != "" {
		t.Fatal("chromium is not installed (scripts/services.sh installs it)")
	}
	t.Skip("chromium is not installed; scripts/services.sh installs it")
	return ""
}

func artifactDir(t *testing.T) string {
	dir := os.Getenv("SCOPE_HYGIENE_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "var", "artifacts")
	}
	dir = filepath.Join(dir, "web")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func buildBin(t *testing.T, dir, pkg, name string) string {
	t.Helper()
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// startServer runs `scope-hygiene serve` in an empty directory on a free loopback port.
func startServer(t *testing.T, bin string) string {
	t.Helper()
	work := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var logs bytes.Buffer
	cmd := exec.Command(bin, "serve", "-addr", addr)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "SCOPE_HYGIENE_HOUSE_TOKEN="+houseToken, "SCOPE_HYGIENE_STORE=", "SCOPE_HYGIENE_KEY_FILE=")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r, err := http.Get(base + "/healthz"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not come up:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// watcher records what the browser does: every request URL, every console error, and the body
// of every POST /precheck, which it lets through or fails as the test says.
type watcher struct {
	mu     sync.Mutex
	urls   []string
	errors []string
	bodies chan []byte
	pass   bool
	ctx    context.Context
	paused chan *fetch.EventRequestPaused
}

func (w *watcher) listen(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		w.urls = append(w.urls, e.Request.URL)
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			w.errors = append(w.errors, "console."+string(e.Type))
		}
	case *runtime.EventExceptionThrown:
		w.errors = append(w.errors, "exception: "+e.ExceptionDetails.Text)
	case *cdplog.EventEntryAdded:
		// A refusal is an answer the page shows; Chromium still logs its 4xx status.
		refusal := e.Entry.Source == cdplog.EntrySourceNetwork && strings.HasSuffix(e.Entry.URL, "/precheck") && strings.Contains(e.Entry.Text, "status of 400")
		if e.Entry.Level == cdplog.EntryLevelError && !refusal {
			w.errors = append(w.errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
		}
	case *fetch.EventRequestPaused:
		select {
		case w.paused <- e:
		default:
		}
	}
}

// release answers paused requests outside the event loop (a listener must not call commands).
func (w *watcher) release() {
	for e := range w.paused {
		var body []byte
		for _, p := range e.Request.PostDataEntries {
			body = append(body, p.Bytes...)
		}
		w.bodies <- body
		w.mu.Lock()
		pass := w.pass
		w.mu.Unlock()
		if pass {
			chromedp.Call(w.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
		} else {
			chromedp.Call(w.ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonAborted})
		}
	}
}

func (w *watcher) setPass(p bool) { w.mu.Lock(); w.pass = p; w.mu.Unlock() }

func (w *watcher) nextBody(t *testing.T) []byte {
	t.Helper()
	select {
	case b := <-w.bodies:
		return b
	case <-time.After(20 * time.Second):
		t.Fatal("no POST /precheck seen within 20 s")
		return nil
	}
}

func run(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, steps...); err != nil {
		t.Fatal(err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// shot writes a screenshot: of the whole page, or with full false of the window only. The
// machine may be busy, so a screenshot has longer than an action.
func shot(t *testing.T, ctx context.Context, dir, name string, full bool) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	capture := chromedp.CaptureScreenshot()
	if full {
		capture = chromedp.FullScreenshot(100)
	}
	png, err := chromedp.Run(tctx, capture)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// widths are the windows every view and state of the page must fit: a phone and a laptop.
var widths = []int64{390, 1280}

// fits checks the current view and state at each of widths: the document is no wider than the
// window, no card or panel holds content wider than itself, every table either fits or scrolls
// inside its own box, which itself fits, and no value is shown as "[object …]", "undefined" or
// "NaN". It writes a screenshot per width (name-390.png, name-1280.png) and leaves the window at
// 1280 px.
func fits(t *testing.T, ctx context.Context, dir, name string, full bool) {
	t.Helper()
	const measure = `(() => {
		const de = document.documentElement, vw = window.innerWidth;
		const out = {scroll: de.scrollWidth, client: de.clientWidth, inner: vw, over: []};
		const seen = (e) => e.getClientRects().length > 0 && !e.closest('[hidden]');
		for (const tb of document.querySelectorAll('table')) {
			if (!seen(tb)) continue;
			const box = tb.closest('.scroll');
			const what = (tb.closest('[id]') || {}).id + ' table';
			if (!box) { if (tb.getBoundingClientRect().right > vw + 0.5) out.over.push(what + ' is wider than the window and has no scrolling box'); continue; }
			const r = box.getBoundingClientRect(), cs = getComputedStyle(box);
			if (r.left < -0.5 || r.right > vw + 0.5) out.over.push(what + ': its scrolling box runs past the window (' + Math.round(r.left) + '..' + Math.round(r.right) + ')');
			if (box.scrollWidth > box.clientWidth + 1 && !/(auto|scroll)/.test(cs.overflowX)) out.over.push(what + ' is clipped: its box does not scroll');
		}
		for (const box of document.querySelectorAll('main, .card, .panel, .fact, .text, .verify, .verdict, .refusal')) {
			if (seen(box) && box.scrollWidth > box.clientWidth + 1) out.over.push(((box.id || box.className) + ' box') + ': its content is ' + box.scrollWidth + ' px wide in ' + box.clientWidth + ' px');
		}
		const shown = document.body.innerText.match(/\[object \w+\]|\bundefined\b|\bNaN\b/);
		if (shown) out.over.push('the page shows ' + JSON.stringify(shown[0]));
		return JSON.stringify(out);
	})()`
	for _, w := range widths {
		run(t, ctx, chromedp.EmulateViewport(w, 900))
		var m struct {
			Scroll, Client, Inner int
			Over                  []string
		}
		if err := json.Unmarshal([]byte(eval[string](t, ctx, measure)), &m); err != nil {
			t.Fatal(err)
		}
		if m.Scroll > m.Inner || m.Scroll > m.Client {
			t.Errorf("%s at %d px: the page is %d px wide (window %d px, client %d px)", name, w, m.Scroll, m.Inner, m.Client)
		}
		for _, o := range m.Over {
			t.Errorf("%s at %d px: %s", name, w, o)
		}
		shot(t, ctx, dir, fmt.Sprintf("%s-%d.png", name, w), full)
	}
}

// paste puts text into a textarea the way typing would (the page listens for input events).
func paste(id, text string) chromedp.Action[chromedp.Void] {
	js, _ := json.Marshal(text)
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %s; e.dispatchEvent(new Event('input')); return true; })()`, id, js))(ctx, tg)
		return err
	})
}

func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a browser against the built binary")
	}
	chromium := chromiumPath(t)
	dir := t.TempDir()
	server := buildBin(t, dir, "./tools/scope-hygiene", "scope-hygiene")
	packBin := buildBin(t, dir, "./tools/pack", "pack")
	base := startServer(t, server)
	shots := artifactDir(t)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()

	w := &watcher{bodies: make(chan []byte, 4), ctx: ctx, paused: make(chan *fetch.EventRequestPaused, 4)}
	if err := chromedp.Listen(ctx, w.listen); err != nil {
		t.Fatal(err)
	}
	go w.release()
	defer close(w.paused)
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/precheck", RequestStage: fetch.RequestStageRequest}}}); err != nil {
		t.Fatal(err)
	}

	open := func() {
		t.Helper()
		run(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitReady(chromedp.CSS(`body[data-ready="true"][data-engine="ready"]`)))
	}
	open()

	t.Run("criteria", func(t *testing.T) {
		var crit map[string]any
		r, err := http.Get(base + "/criteria")
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(r.Body).Decode(&crit)
		r.Body.Close()
		facts := eval[string](t, ctx, `document.getElementById('facts').textContent`)
		for _, want := range []string{crit["criteria_id"].(string), crit["criteria_digest"].(string), crit["corpus"].(map[string]any)["sha256"].(string), "RULED"} {
			if !strings.Contains(facts, want) {
				t.Errorf("facts lack %q", want)
			}
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('#matrix table').length`); n != len(crit["assessability_matrix"].(map[string]any)) {
			t.Errorf("%d matrix tables", n)
		}
		const shown = `document.querySelectorAll('#texts details:not([hidden]), #readings details:not([hidden])').length`
		all := eval[int](t, ctx, shown)
		run(t, ctx, paste("text-search", "marker"))
		some := eval[int](t, ctx, shown)
		if some == 0 || some >= all {
			t.Errorf("search for marker shows %d of %d texts and readings", some, all)
		}
		eval[bool](t, ctx, `(() => { document.getElementById('texts-heading').scrollIntoView(); return true; })()`)
		fits(t, ctx, shots, "1-criteria-search", false)
		run(t, ctx, paste("text-search", ""))
		eval[bool](t, ctx, `(() => { window.scrollTo(0, 0); return true; })()`)
		fits(t, ctx, shots, "1-criteria", false)
	})

	// The page's body for a file is byte for byte what the pack command writes for it.
	t.Run("pack_identical", func(t *testing.T) {
		w.setPass(false) // these bodies are compared, not sent
		sub := filepath.Join(dir, "generic-submission.json")
		man := filepath.Join(dir, "manifest.json")
		os.WriteFile(sub, []byte(`{"family":"generic","form":"full_text","records":[{"id":"c1","content_text":"`+canaryA+`","record_class":"claim","user":"u1","metadata":{"note":"`+canaryB+`","shared":true}},{"id":"c2","content_text":"`+canaryB+`","user":"u2"}]}`), 0o644)
		os.WriteFile(man, []byte(`{"declared_scope_keys":["user"],"global_content_keys":["`+canaryB+`"]}`), 0o644)
		subWithManifest := filepath.Join(dir, "generic-submission-manifest.json")
		b, _ := os.ReadFile(sub)
		os.WriteFile(subWithManifest, bytes.Replace(b, []byte(`"records":`), []byte(`"manifest":{"declared_scope_keys":["user"],"global_content_keys":["`+canaryB+`"]},"records":`), 1), 0o644)
		type fixture struct {
			file, source string
			packArgs     []string
		}
		fixtures := []fixture{
			{abs(t, "../pack/testdata/letta-af/solo.af"), "letta-af", []string{"--from", "letta-af"}},
			{abs(t, "../pack/testdata/letta-af/team.af"), "letta-af", []string{"--from", "letta-af"}},
			{abs(t, "../pack/testdata/claims/claims.jsonl"), "claims-jsonl", []string{"--from", "claims-jsonl"}},
			{sub, "submission", []string{"--from", "claims-jsonl"}},
			{subWithManifest, "submission", []string{"--from", "claims-jsonl", "--manifest", man}},
		}
		shared, _ := filepath.Glob(filepath.Join("..", "..", "shared", "fixtures", "letta", "*.af"))
		if len(shared) == 0 {
			t.Log("../shared/fixtures/letta not found: comparing on pack's own .af files only")
		}
		for _, f := range shared {
			fixtures = append(fixtures, fixture{abs(t, f), "letta-af", []string{"--from", "letta-af"}})
		}
		for _, f := range fixtures {
			args := append(append([]string{}, f.packArgs...), "--hash-only", f.file)
			want, err := exec.Command(packBin, args...).Output()
			if err != nil {
				t.Fatalf("pack %v: %v", args, err)
			}
			run(t, ctx, chromedp.Click(chromedp.ID("tab-precheck")), chromedp.SetUploadFiles(chromedp.ID("pc-file"), []string{f.file}),
				chromedp.SetValue(chromedp.ID("pc-source"), f.source), chromedp.Click(chromedp.ID("pc-prepare")),
				chromedp.WaitVisible(chromedp.ID("pc-preview")), chromedp.Click(chromedp.ID("pc-send")))
			got := w.nextBody(t)
			if !bytes.Equal(got, bytes.TrimSuffix(want, []byte("\n"))) {
				t.Errorf("%s: the page's body (%d bytes) is not pack's (%d bytes)", filepath.Base(f.file), len(got), len(want))
			}
			if bytes.Contains(got, []byte("content_text")) {
				t.Errorf("%s: content_text in a hash-only body", filepath.Base(f.file))
			}
			run(t, ctx, chromedp.WaitVisible(chromedp.ID("pc-error")))
		}
		fits(t, ctx, shots, "2-precheck-not-sent", true)
	})

	t.Run("drop_a_file", func(t *testing.T) {
		js, _ := json.Marshal(sample)
		eval[bool](t, ctx, `(() => { const dt = new DataTransfer(); dt.items.add(new File([`+string(js)+`], 'dropped.json', {type: 'application/json'}));
			document.getElementById('pc-drop').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true})); return true; })()`)
		run(t, ctx, chromedp.SetValue(chromedp.ID("pc-source"), "submission"), chromedp.Click(chromedp.ID("pc-prepare")), chromedp.WaitVisible(chromedp.ID("pc-preview")))
		body := eval[string](t, ctx, `document.getElementById('pc-body').textContent`)
		if !strings.Contains(body, `"family": "mem0"`) || strings.Contains(body, canaryA) || strings.Contains(body, "content_text") {
			t.Fatalf("the dropped file was not prepared hash-only")
		}
		fits(t, ctx, shots, "2-precheck-preview", true)
	})

	var firstPrecheck time.Time
	t.Run("precheck_hash_only", func(t *testing.T) {
		w.setPass(true)
		run(t, ctx, chromedp.Click(chromedp.ID("tab-precheck")), chromedp.SetValue(chromedp.ID("pc-source"), "submission"), paste("pc-text", sample),
			chromedp.Click(chromedp.ID("pc-prepare")), chromedp.WaitVisible(chromedp.ID("pc-preview")))
		preview := eval[string](t, ctx, `document.getElementById('pc-body').textContent + document.getElementById('pc-summary').textContent`)
		if strings.Contains(preview, canaryA) || !strings.Contains(preview, "No content text leaves this machine") {
			t.Errorf("the preview does not show a hash-only body")
		}
		firstPrecheck = time.Now()
		run(t, ctx, chromedp.Click(chromedp.ID("pc-send")))
		body := w.nextBody(t)
		if bytes.Contains(body, []byte("content_text")) || bytes.Contains(body, []byte(canaryA)) || bytes.Contains(body, []byte(canaryB)) {
			t.Fatalf("the pre-check body carries content: %d bytes", len(body))
		}
		if bytes.Contains(body, []byte(`"caller"`)) {
			t.Fatal("a visitor without a wallet sent a caller")
		}
		var sub map[string]any
		if err := json.Unmarshal(body, &sub); err != nil || sub["form"] != "hash_only" {
			t.Fatalf("body form %v (%v)", sub["form"], err)
		}
		run(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#pc-result table`)))
		if n := eval[int](t, ctx, `document.querySelectorAll('#pc-result tr[data-factor]').length`); n != 5 {
			t.Errorf("%d factor rows in the pre-check answer", n)
		}
		fits(t, ctx, shots, "2-precheck", true)
	})

	t.Run("refusal_shows_rule", func(t *testing.T) {
		w.setPass(true)
		time.Sleep(time.Until(firstPrecheck.Add(5200 * time.Millisecond))) // the published minimum interval
		run(t, ctx, paste("pc-text", `{"family":"mem1","form":"full_text","records":[{"id":"r1","content_text":"`+canaryA+`"}]}`),
			chromedp.Click(chromedp.ID("pc-prepare")), chromedp.WaitVisible(chromedp.ID("pc-preview")), chromedp.Click(chromedp.ID("pc-send")))
		w.nextBody(t)
		run(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#pc-result .rule`)))
		if rule := eval[string](t, ctx, `document.querySelector('#pc-result .rule').textContent`); rule != "family_unknown" {
			t.Fatalf("refusal shows rule %q", rule)
		}
		line := eval[string](t, ctx, `document.querySelector('#pc-result .refusal p:nth-of-type(2)').textContent`)
		if !strings.Contains(line, "(family_unknown)") {
			t.Errorf("explanation %q", line)
		}
		fits(t, ctx, shots, "3-refusal", true)
	})

	// A house audit gives a real signed report; the page verifies it, renders it, and refuses a
	// copy with one byte changed.
	t.Run("report_verifies", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, base+"/audit", strings.NewReader(sample))
		req.Header.Set("Authorization", "Bearer "+houseToken)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		report, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 {
			t.Fatalf("audit: %d", r.StatusCode)
		}
		good := filepath.Join(dir, "report.json")
		bad := filepath.Join(dir, "report-one-byte-changed.json")
		os.WriteFile(good, report, 0o644)
		changed := bytes.Replace(report, []byte(`"live":3`), []byte(`"live":4`), 1)
		if bytes.Equal(changed, report) || len(changed) != len(report) {
			t.Fatal("could not change one byte")
		}
		os.WriteFile(bad, changed, 0o644)
		var doc map[string]any
		json.Unmarshal(report, &doc)

		run(t, ctx, chromedp.Click(chromedp.ID("tab-report")), chromedp.SetUploadFiles(chromedp.ID("rv-file"), []string{good}),
			chromedp.Click(chromedp.ID("rv-verify")), chromedp.WaitReady(chromedp.CSS(`#rv-check[data-outcome]`)))
		if o := eval[string](t, ctx, `document.getElementById('rv-check').dataset.outcome`); o != "pass" {
			t.Fatalf("the real report: outcome %q: %s", o, eval[string](t, ctx, `document.getElementById('rv-check').textContent`))
		}
		if v := eval[string](t, ctx, `document.querySelector('.verdict .line').textContent`); v != doc["verdict_line"] {
			t.Errorf("verdict line %q", v)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('#rv-result .panel').length`); n != 5 {
			t.Errorf("%d factor panels", n)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('#rv-result .panel[data-factor="unscoped_rate"] .bar').length`); n != 1 {
			t.Errorf("the assessable rate has %d bars", n)
		}
		na := eval[string](t, ctx, `document.querySelector('#rv-result .panel[data-status="NOT ASSESSABLE"]').textContent`)
		if regexp.MustCompile(`[0-9]`).MatchString(na) || !strings.Contains(na, "NOT ASSESSABLE") {
			t.Errorf("a NOT ASSESSABLE panel shows a number: %q", na)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('#rv-result .panel[data-status="NOT ASSESSABLE"] .bar, #rv-result .panel[data-status="NOT ASSESSABLE"] .pct, #rv-result .panel[data-status="NOT ASSESSABLE"] dl').length`); n != 0 {
			t.Errorf("a NOT ASSESSABLE panel has %d bars or counts", n)
		}
		if s := eval[string](t, ctx, `document.querySelector('#rv-result td.statement').textContent`); s != "undeclared cross-scope identical content — contamination indicator, not proof of a runtime leak" {
			t.Errorf("cluster statement %q", s)
		}
		fits(t, ctx, shots, "4-report", true)

		run(t, ctx, chromedp.SetUploadFiles(chromedp.ID("rv-file"), []string{bad}), chromedp.Click(chromedp.ID("rv-verify")),
			chromedp.WaitReady(chromedp.CSS(`#rv-check[data-outcome]`)))
		if o := eval[string](t, ctx, `document.getElementById('rv-check').dataset.outcome`); o != "fail" {
			t.Fatalf("the changed copy: outcome %q", o)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('#rv-result .panel').length`); n != 0 {
			t.Errorf("a result that does not verify is rendered (%d panels)", n)
		}
		fits(t, ctx, shots, "5-changed-byte", true)

		// A browser without WebCrypto Ed25519 is told so, and nothing claims a check that did not run.
		eval[bool](t, ctx, `(() => { crypto.subtle.importKey = () => Promise.reject(new DOMException('no Ed25519', 'NotSupportedError')); return true; })()`)
		run(t, ctx, chromedp.SetUploadFiles(chromedp.ID("rv-file"), []string{good}), chromedp.Click(chromedp.ID("rv-verify")),
			chromedp.WaitReady(chromedp.CSS(`#rv-check[data-outcome]`)))
		if o := eval[string](t, ctx, `document.getElementById('rv-check').dataset.outcome`); o != "unsupported" {
			t.Fatalf("without Ed25519: outcome %q", o)
		}
		if txt := eval[string](t, ctx, `document.getElementById('rv-check').textContent`); !strings.Contains(txt, "lacks WebCrypto Ed25519") || strings.Contains(txt, "signature verifies") {
			t.Errorf("without Ed25519 the page says %q", txt)
		}
		fits(t, ctx, shots, "5-no-ed25519", true)
		open() // a fresh page with the browser's own WebCrypto
	})

	// Conflicts by sub-check and duplicate clusters render as tables with the report's own ids.
	t.Run("report_tables", func(t *testing.T) {
		exp := `{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"a","user_id":"alice","attributed_scope":"bob"},` +
			`{"id":"r2","content_text":"a","user_id":"alice"},{"id":"r3","content_text":"b","user_id":"bob"}]}`
		req, _ := http.NewRequest(http.MethodPost, base+"/audit", strings.NewReader(exp))
		req.Header.Set("Authorization", "Bearer "+houseToken)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		report, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 {
			t.Fatalf("audit: %d", r.StatusCode)
		}
		file := filepath.Join(dir, "report-conflicts.json")
		os.WriteFile(file, report, 0o644)
		run(t, ctx, chromedp.Click(chromedp.ID("tab-report")), chromedp.SetUploadFiles(chromedp.ID("rv-file"), []string{file}),
			chromedp.Click(chromedp.ID("rv-verify")), chromedp.WaitReady(chromedp.CSS(`#rv-check[data-outcome="pass"]`)))
		rows := eval[[]string](t, ctx, `[...document.querySelectorAll('#rv-result table.data tbody tr')].map(r => r.textContent)`)
		want := []string{"attributed_scope1r1", "endpoint_group_ids0", "episode_group_ids0", "history_scope0", "1scopedalice2r1r2"}
		if strings.Join(rows, "|") != strings.Join(want, "|") {
			t.Fatalf("table rows %q, want %q", rows, want)
		}
		fits(t, ctx, shots, "6-report-conflicts", true)
	})

	// The second rule set: its criteria in the explorer, a private pre-check of a mutation log
	// (every identifier a pseudonym made in the browser), its free signed audit, and both results
	// in the verifier. The masked log's report says what the submitted log's says.
	t.Run("forget_envelope", func(t *testing.T) {
		var idx struct {
			Criteria []struct {
				CriteriaID string `json:"criteria_id"`
				Document   string `json:"document"`
			} `json:"criteria"`
		}
		getJSON(t, base+"/criteria/index", &idx)
		var fe map[string]any
		for _, c := range idx.Criteria {
			if c.CriteriaID == "memory-forget-envelope/v1" {
				getJSON(t, base+c.Document, &fe)
			}
		}
		if fe == nil {
			t.Fatal("/criteria/index lists no memory-forget-envelope/v1")
		}
		open()
		run(t, ctx, chromedp.SetValue(chromedp.ID("cr-set"), "memory-forget-envelope/v1"))
		eval[bool](t, ctx, `document.getElementById('cr-set').dispatchEvent(new Event('change')) || true`)
		facts := eval[string](t, ctx, `document.getElementById('facts').textContent`)
		for _, want := range []string{fe["criteria_id"].(string), fe["criteria_digest"].(string), fe["corpus"].(map[string]any)["sha256"].(string), "UNPRICED"} {
			if !strings.Contains(facts, want) {
				t.Errorf("facts lack %q", want)
			}
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('#matrix table.gates tbody tr').length`); n != len(fe["gates"].(map[string]any)) {
			t.Errorf("%d gate rows", n)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('#readings details').length`); n != len(fe["interpretations"].([]any)) {
			t.Errorf("%d readings", n)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('ol.refusals li').length`); n != len(fe["refusals"].([]any)) {
			t.Errorf("%d refusals listed", n)
		}
		fits(t, ctx, shots, "8-criteria-forget-envelope", true)

		w.setPass(true)
		// Left as "submission", the log is recognised by its format.
		run(t, ctx, chromedp.Click(chromedp.ID("tab-precheck")), chromedp.SetValue(chromedp.ID("pc-source"), "submission"), paste("pc-text", feLog),
			chromedp.Click(chromedp.ID("pc-prepare")), chromedp.WaitVisible(chromedp.ID("pc-preview")))
		if src := eval[string](t, ctx, `document.getElementById('pc-source').value`); src != "mutation-log" {
			t.Errorf("a pasted mutation log is prepared as %q", src)
		}
		preview := eval[string](t, ctx, `document.getElementById('pc-body').textContent + document.getElementById('pc-summary').textContent`)
		if strings.Contains(preview, "canary") || !strings.Contains(preview, "No identifier leaves this machine") {
			t.Errorf("the preview does not show a masked log")
		}
		fits(t, ctx, shots, "9-log-preview", true)
		sent := time.Now()
		run(t, ctx, chromedp.Click(chromedp.ID("pc-send")))
		if body := w.nextBody(t); bytes.Contains(bytes.ToLower(body), []byte("canary")) || !bytes.Contains(body, []byte(`"scope_dimensions":["tenant","agent","session"]`)) {
			t.Fatalf("the pre-check body carries an identifier or lost its scope labels (%d bytes)", len(body))
		}
		run(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#pc-result table`)))
		if n := eval[int](t, ctx, `document.querySelectorAll('#pc-result tr[data-factor]').length`); n != 7 {
			t.Errorf("%d factor rows in the pre-check answer", n)
		}
		na := eval[string](t, ctx, `[...document.querySelectorAll('#pc-result tr[data-factor]')].filter(r => r.textContent.includes('NOT ASSESSABLE')).map(r => r.textContent).join('|')`)
		if na == "" || regexp.MustCompile(`[0-9]`).MatchString(na) {
			t.Errorf("NOT ASSESSABLE rows %q", na)
		}
		fits(t, ctx, shots, "9-log-precheck", true)

		time.Sleep(time.Until(sent.Add(5200 * time.Millisecond))) // the published minimum interval
		run(t, ctx, chromedp.Click(chromedp.ID("pc-audit")), chromedp.WaitReady(chromedp.CSS(`#rv-check[data-outcome]`)))
		if o := eval[string](t, ctx, `document.getElementById('rv-check').dataset.outcome`); o != "pass" {
			t.Fatalf("the masked log's report: outcome %q: %s", o, eval[string](t, ctx, `document.getElementById('rv-check').textContent`))
		}
		if txt := eval[string](t, ctx, `document.getElementById('rv-check').textContent`); !strings.Contains(txt, fe["criteria_digest"].(string)) {
			t.Errorf("the check does not tie the report to the digest: %q", txt)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('#rv-result .panel').length`); n != 7 {
			t.Errorf("%d factor panels", n)
		}
		for _, p := range eval[[]string](t, ctx, `[...document.querySelectorAll('#rv-result .panel[data-status="NOT ASSESSABLE"]')].map(p => p.textContent)`) {
			if regexp.MustCompile(`[0-9]`).MatchString(p) {
				t.Errorf("a NOT ASSESSABLE panel shows a number: %q", p)
			}
		}
		if txt := strings.ToLower(eval[string](t, ctx, `[...document.querySelectorAll('#rv-result .panels, #rv-result .verdict, #rv-result dl')].map(e => e.textContent).join(' ')`)); strings.Contains(txt, "score") || strings.Contains(txt, "grade") {
			t.Errorf("the report view shows a score or a grade: %q", txt)
		}
		fits(t, ctx, shots, "9-log-report", true)
		var page map[string]any
		if err := json.Unmarshal([]byte(eval[string](t, ctx, `document.getElementById('rv-text').value`)), &page); err != nil {
			t.Fatal(err)
		}

		// The submitted log, audited directly, says what the masked one said.
		time.Sleep(5200 * time.Millisecond)
		r, err := http.Post(base+"/v1/forget-envelope/audit", "application/json", strings.NewReader(feLog))
		if err != nil {
			t.Fatal(err)
		}
		var direct map[string]any
		json.NewDecoder(r.Body).Decode(&direct)
		r.Body.Close()
		if r.StatusCode != 200 {
			t.Fatalf("direct audit: %d %v", r.StatusCode, direct)
		}
		prefix := func(doc map[string]any) string {
			v, _ := doc["verdict_line"].(string)
			return strings.TrimSuffix(v, " — "+fmt.Sprint(doc["check_end"]))
		}
		if prefix(page) != prefix(direct) || !strings.HasPrefix(prefix(direct), "FORGET ENVELOPE — events: 5 ") {
			t.Errorf("verdicts differ:\n page   %s\n direct %s", prefix(page), prefix(direct))
		}
		pf, _ := json.Marshal(page["factors"])
		df, _ := json.Marshal(direct["factors"])
		if !bytes.Equal(pf, df) {
			t.Errorf("factors differ:\n page   %s\n direct %s", pf, df)
		}

		// A malformed log is a refusal naming its rule, explained by the published reading.
		time.Sleep(5200 * time.Millisecond)
		run(t, ctx, chromedp.Click(chromedp.ID("tab-precheck")), paste("pc-text", strings.Replace(feLog, `"op":"reassign"`, `"op":"canary-delete"`, 1)),
			chromedp.Click(chromedp.ID("pc-prepare")), chromedp.WaitVisible(chromedp.ID("pc-preview")), chromedp.Click(chromedp.ID("pc-send")))
		if body := w.nextBody(t); bytes.Contains(bytes.ToLower(body), []byte("canary")) {
			t.Fatal("the refused log's body carries an identifier")
		}
		run(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#pc-result .rule`)))
		if rule := eval[string](t, ctx, `document.querySelector('#pc-result .rule').textContent`); rule != "event_op_invalid" {
			t.Fatalf("refusal shows rule %q", rule)
		}
		if line := eval[string](t, ctx, `document.querySelector('#pc-result .refusal p:nth-of-type(2)').textContent`); !strings.Contains(line, "(FE-R-10)") {
			t.Errorf("explanation %q", line)
		}
		fits(t, ctx, shots, "9-log-refusal", true)
	})

	// Keyboard only: from the top of a fresh page, Tab and Enter reach every control of each view.
	t.Run("keyboard_only", func(t *testing.T) {
		w.setPass(false)
		const label = `(() => { let n = 0; for (const e of document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]')) { if (!e.id && !e.dataset.kb) e.dataset.kb = 'kb-' + (n++) + '-' + e.tagName.toLowerCase(); } return true; })()`
		const visible = `[...document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])')].filter(e => !e.disabled && e.getClientRects().length > 0 && !e.closest('[hidden]')).map(e => e.id || e.dataset.kb)`
		const active = `(() => { const e = document.activeElement; return e ? (e.id || e.dataset.kb || e.tagName) : ''; })()`
		tab := func() { run(t, ctx, chromedp.KeyEvent("\t")) }
		tabTo := func(id string) {
			t.Helper()
			for i := 0; i < 60; i++ {
				tab()
				if eval[string](t, ctx, active) == id {
					return
				}
			}
			t.Fatalf("Tab never reached %s", id)
		}
		for _, view := range []string{"criteria", "precheck", "report"} {
			open()
			tabTo("tab-" + view)
			run(t, ctx, chromedp.KeyEvent("\r"))
			fits(t, ctx, shots, "7-empty-"+view, true)
			switch view {
			case "precheck":
				tabTo("pc-text")
				run(t, ctx, chromedp.KeyEvent(`{"family":"generic","form":"full_text","records":[{"id":"k1","content_text":"typed"}]}`))
				tabTo("pc-prepare")
				run(t, ctx, chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.ID("pc-preview")))
			case "report":
				run(t, ctx, chromedp.SetUploadFiles(chromedp.ID("rv-file"), []string{filepath.Join(dir, "report.json")}))
				tabTo("rv-verify")
				run(t, ctx, chromedp.KeyEvent("\r"), chromedp.WaitReady(chromedp.CSS(`#rv-check[data-outcome="pass"]`)))
			}
			eval[bool](t, ctx, label)
			want := eval[[]string](t, ctx, visible)
			seen := map[string]bool{}
			for i := 0; i < 2*len(want)+15; i++ {
				tab()
				seen[eval[string](t, ctx, active)] = true
			}
			var missed []string
			for _, id := range want {
				if !seen[id] {
					missed = append(missed, id)
				}
			}
			if len(missed) > 0 {
				t.Errorf("%s view: Tab never reached %v (of %d controls)", view, missed, len(want))
			}
		}
	})

	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.errors) > 0 {
		t.Errorf("console errors: %v", w.errors)
	}
	if len(w.urls) == 0 {
		t.Error("no request seen: the watcher is not listening")
	}
	for _, u := range w.urls {
		pu, err := url.Parse(u)
		if err != nil || pu.Hostname() != "127.0.0.1" {
			t.Errorf("a request left the loopback: %s", u)
		}
	}
}

// feLog is the worked example of docs/forget-envelope.md with a canary in every identifier and a
// second forget without an envelope.
const feLog = `{"format":"mutation-log","forget_mode":"transitional","scope_dimensions":["tenant","agent","session"],
 "principals":[{"id":"canary-owner","grants":[{"tenant":"canary-A","agent":"canary-7","session":"canary-s1"}]},
               {"id":"canary-other","grants":[{"tenant":"canary-A","agent":"canary-7"}]}],
 "events":[
  {"seq":1,"op":"write","key":{"scope":{"tenant":"canary-A","agent":"canary-7","session":"canary-s1"},"name":"canary-pref"},"principal":"canary-owner","version":1},
  {"seq":2,"op":"forget","key":{"scope":{"tenant":"canary-A","agent":"canary-7","session":"canary-s1"},"name":"canary-pref"},"principal":"canary-owner","envelope":["canary-owner"]},
  {"seq":3,"op":"reassign","session":{"tenant":"canary-A","agent":"canary-7","session":"canary-s1"},"principal":"canary-other","to":"canary-other"},
  {"seq":4,"op":"write","key":{"scope":{"tenant":"canary-a","agent":"canary-7","session":"canary-s1"},"name":" canary-Pref"},"principal":"canary-other","version":2},
  {"seq":5,"op":"forget","key":{"scope":{"tenant":"canary-A"},"name":"canary-never-written"},"principal":"canary-owner"}],
 "snapshot":[{"key":{"scope":{"tenant":"canary-A","agent":"canary-7","session":"canary-s1"},"name":"canary-pref"},"version":1}]}`

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	r, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
}

func abs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
