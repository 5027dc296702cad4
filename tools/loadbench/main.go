// Command loadbench is the bounded load benchmark of issue 12. It builds and starts the real
// binary (`scope-hygiene serve`) on a loopback port, in house mode, and sends max-size exports
// (gen.MaxSizeExport, every family in turn) to /audit and /precheck at concurrency 1, 8 and 32 for
// a fixed time each, on SQLite and on PostgreSQL. It prints requests per second, p50 and p99 per
// route and level, the server's peak resident memory (and its anonymous part, the Go runtime's
// memory) against the bodies in flight, and beside it the engine's in-process rate on the same
// bodies (the share HTTP reaches at concurrency 1).
//
// Nothing leaves the machine: the server listens on 127.0.0.1 and every request goes there.
//
//	go run ./tools/loadbench                      # SQLite (on disk, and on tmpfs: no durable write) and PostgreSQL
//	go run ./tools/loadbench -stores sqlite -d 3s
//	go run ./tools/loadbench -memory-limit-mb 40      # the server with a soft memory limit
//
// The SQLite ledger is written with synchronous=FULL as shipped; the "sqlite-tmpfs" run keeps the
// same store on /dev/shm, where a sync costs nothing: the figure without the durable write. The
// pre-check runs with -trust-proxy and one X-Forwarded-For address per request, so that the free
// tier's per-address interval never refuses the load.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/rules"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	bin      string
	stores   string
	pgDSN    string
	duration time.Duration
	levels   []int
	routes   []string
	memLimit int // the server's -memory-limit-mb (0: none)
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("loadbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.bin, "bin", "", "the scope-hygiene binary (default: build ./tools/scope-hygiene into a temporary directory)")
	fs.StringVar(&o.stores, "stores", "sqlite,sqlite-tmpfs,postgres", "stores to run: sqlite (on disk, synchronous=FULL), sqlite-tmpfs (no durable write), postgres")
	fs.StringVar(&o.pgDSN, "pg", os.Getenv("SCOPE_HYGIENE_PG_DSN"), "PostgreSQL DSN (env SCOPE_HYGIENE_PG_DSN); a schema of its own is created and dropped")
	fs.DurationVar(&o.duration, "d", 5*time.Second, "time per route and concurrency level")
	fs.IntVar(&o.memLimit, "memory-limit-mb", 0, "the server's -memory-limit-mb, its soft memory limit in MiB (0: none, as shipped)")
	levels := fs.String("c", "1,8,32", "concurrency levels")
	routes := fs.String("routes", "/audit,/precheck", "routes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	for _, s := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintln(stderr, "loadbench: -c: want positive whole numbers")
			return 2
		}
		o.levels = append(o.levels, n)
	}
	o.routes = strings.Split(*routes, ",")
	if err := bench(o, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "loadbench:", err)
		return 1
	}
	return 0
}

// result is one route at one concurrency level.
type result struct {
	store, route string
	c            int
	n, failed    int
	peakRSS      int64 // the server's resident set, sampled during this load
	peakAnon     int64 // its anonymous part (the Go runtime's memory; the rest is the binary's pages)
	rate         float64
	p50, p99     time.Duration
	total        time.Duration // the answered requests' latencies summed
}

func bench(o options, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "loadbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if o.bin == "" {
		o.bin = filepath.Join(dir, "scope-hygiene")
		fmt.Fprintln(stderr, "building ./tools/scope-hygiene")
		if out, err := exec.Command("go", "build", "-o", o.bin, "./tools/scope-hygiene").CombinedOutput(); err != nil {
			return fmt.Errorf("build: %v\n%s", err, out)
		}
	}
	var bodies [][]byte
	size := 0
	for _, f := range gen.MaxSizeFamilies {
		b := gen.MaxSizeExport(f)
		bodies = append(bodies, b)
		size += len(b)
	}
	avg := size / len(bodies)
	inproc, err := inProcess(bodies, o.duration)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "max-size exports: %d families, %d bytes on average; %s per route and level\n\n", len(bodies), avg, o.duration)
	fmt.Fprintf(stdout, "in-process engine (evaluator.PrepareWith an owned body + Audit, one goroutine): %.1f audits/s\n\n", inproc)

	var all []result
	mems := map[string]memory{}
	for _, st := range strings.Split(o.stores, ",") {
		st = strings.TrimSpace(st)
		spec, cleanup, err := storeSpec(st, dir, o.pgDSN)
		if err != nil {
			fmt.Fprintf(stderr, "%s: skipped: %v\n", st, err)
			continue
		}
		rs, mem, err := runStore(o, st, spec, dir, bodies, stderr)
		cleanup()
		if err != nil {
			return fmt.Errorf("%s: %w", st, err)
		}
		all = append(all, rs...)
		mems[st] = mem
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "store\troute\tconcurrency\trequests\tfailed\treq/s\tp50 ms\tp99 ms\tpeak RSS MB\t")
	for _, r := range all {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", r.store, r.route, r.c, r.n, r.failed, r.rate,
			ms(r.p50), ms(r.p99), float64(r.peakRSS)/1e6)
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	for _, st := range strings.Split(o.stores, ",") {
		if m, ok := mems[strings.TrimSpace(st)]; ok && len(m.steps) > 0 {
			fmt.Fprintf(stdout, "%s: an audit's steps over HTTP at concurrency 1 (mean ms; sign runs beside ledger; then the whole request on the server and at the client):", st)
			for _, sm := range m.steps {
				fmt.Fprintf(stdout, " %s %.3f", sm.step, ms(sm.mean))
			}
			fmt.Fprintln(stdout)
		}
	}
	for _, st := range strings.Split(o.stores, ",") {
		if m, ok := mems[strings.TrimSpace(st)]; ok && m.inproc > 0 {
			fmt.Fprintf(stdout, "%s: HTTP /audit at concurrency 1 %.1f/s, in-process engine %.1f/s, interleaved in %s slices: HTTP is %.0f%% of in-process\n",
				st, m.http1, m.inproc, slice, 100*m.http1/m.inproc)
		}
	}
	maxC := 0
	for _, c := range o.levels {
		maxC = max(maxC, c)
	}
	inFlight := int64(maxC * avg)
	for _, r := range all {
		if r.route != "/audit" || r.c != maxC {
			continue
		}
		m := mems[r.store]
		fmt.Fprintf(stdout, "%s: peak RSS during /audit at concurrency %d %.1f MB = %.1fx the bodies in flight (%d x %d bytes); "+
			"its anonymous part %.1f MB = %.1fx; %.1f MB over the %.1f MB at rest after the start = %.1fx; start's high-water mark %.1f MB\n",
			r.store, maxC, float64(r.peakRSS)/1e6, float64(r.peakRSS)/float64(inFlight), maxC, avg,
			float64(r.peakAnon)/1e6, float64(r.peakAnon)/float64(inFlight),
			float64(r.peakRSS-m.idle)/1e6, float64(m.idle)/1e6, float64(r.peakRSS-m.idle)/float64(inFlight), float64(m.hwm)/1e6)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// inProcess is the engine's rate on the bodies, in this process, on one goroutine.
func inProcess(bodies [][]byte, d time.Duration) (float64, error) {
	n, took, err := inProcessN(bodies, d)
	if err != nil {
		return 0, err
	}
	return float64(n) / took.Seconds(), nil
}

var (
	psOnce sync.Once
	ps     *rules.ProgramSet
	psErr  error
	inSeq  int
)

// inProcessN audits the bodies in turn for d; it returns how many and how long they took.
func inProcessN(bodies [][]byte, d time.Duration) (int, time.Duration, error) {
	psOnce.Do(func() { ps, psErr = rules.Default() })
	if psErr != nil {
		return 0, 0, psErr
	}
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		// The server's own path: the body handed over, not copied (the bodies are never written).
		p, ref, err := evaluator.PrepareWith(ps, bodies[inSeq%len(bodies)], evaluator.Options{OwnedBody: true})
		if err != nil || ref != nil {
			return 0, 0, fmt.Errorf("in-process audit refused or failed")
		}
		if _, err := p.Audit(time.Now()); err != nil {
			return 0, 0, err
		}
		n++
		inSeq++
	}
	return n, time.Since(start), nil
}

// storeSpec is the -store value of one run, and what removes it.
func storeSpec(name, dir, pgDSN string) (string, func(), error) {
	switch name {
	case "sqlite":
		return "sqlite:" + filepath.Join(dir, "ledger.db"), func() {}, nil
	case "sqlite-tmpfs":
		shm, err := os.MkdirTemp("/dev/shm", "loadbench-")
		if err != nil {
			return "", nil, fmt.Errorf("no /dev/shm: %w", err)
		}
		return "sqlite:" + filepath.Join(shm, "ledger.db"), func() { os.RemoveAll(shm) }, nil
	case "postgres":
		if pgDSN == "" {
			return "", nil, errors.New("no DSN (-pg or SCOPE_HYGIENE_PG_DSN)")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, pgDSN)
		if err != nil {
			return "", nil, fmt.Errorf("connect: %w", err)
		}
		schema := "loadbench_" + randomHex(6)
		if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
			conn.Close(ctx)
			return "", nil, fmt.Errorf("create schema: %w", err)
		}
		conn.Close(ctx)
		u, err := url.Parse(pgDSN)
		if err != nil {
			return "", nil, err
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if conn, err := pgx.Connect(ctx, pgDSN); err == nil {
				conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
				conn.Close(ctx)
			}
		}, nil
	}
	return "", nil, fmt.Errorf("unknown store %q", name)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// runStore starts the server on one store and runs every route and level against it.
func runStore(o options, name, spec, dir string, bodies [][]byte, stderr io.Writer) ([]result, memory, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, memory{}, err
	}
	addr := ln.Addr().String()
	ln.Close()
	token := randomHex(32)
	work, err := os.MkdirTemp(dir, name+"-")
	if err != nil {
		return nil, memory{}, err
	}
	cmd := exec.Command(o.bin, "serve", "-addr", addr, "-store", spec, "-key-file", filepath.Join(work, "key.pem"),
		"-siwx-key-file", filepath.Join(work, "siwx.key"), "-trust-proxy", "-max-inflight-audits", "64",
		"-request-timeout", "30s", "-memory-limit-mb", strconv.Itoa(o.memLimit))
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "SCOPE_HYGIENE_HOUSE_TOKEN="+token, "SCOPE_HYGIENE_LOG_LEVEL=warn")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return nil, memory{}, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}()
	base := "http://" + addr
	// Buffers of 64 KiB each way: the bodies are 261 KB and the reports about 110 KB, and the
	// default 4 KiB buffers would measure this program's system calls as much as the service.
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64,
		WriteBufferSize: 64 << 10, ReadBufferSize: 64 << 10}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if r, err := client.Get(base + "/healthz"); err == nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			if r.StatusCode == 200 {
				break
			}
		}
		select {
		case err := <-exited:
			return nil, memory{}, fmt.Errorf("server exited (%v): %s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			return nil, memory{}, fmt.Errorf("server not ready: %s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Fprintf(stderr, "%s: server ready\n", name)
	pid := cmd.Process.Pid
	mem := memory{idle: rss(pid, "VmRSS:")}
	var out []result
	var seq atomic.Int64
	for _, route := range o.routes {
		for _, c := range o.levels {
			// The resident set is sampled while the load runs: the peak under this load, not
			// the start's high-water mark (the corpus re-pass at start is measured apart).
			stop := make(chan struct{})
			peak := make(chan [2]int64, 1)
			go func() {
				var p, a int64
				t := time.NewTicker(20 * time.Millisecond)
				defer t.Stop()
				for {
					p, a = max(p, rss(pid, "VmRSS:")), max(a, rss(pid, "RssAnon:"))
					select {
					case <-stop:
						peak <- [2]int64{p, a}
						return
					case <-t.C:
					}
				}
			}()
			r := load(client, base, route, token, c, o.duration, bodies, &seq)
			close(stop)
			pk := <-peak
			r.store, r.peakRSS, r.peakAnon = name, pk[0], pk[1]
			fmt.Fprintf(stderr, "%s %s c=%d: %.1f req/s\n", name, route, c, r.rate)
			out = append(out, r)
		}
	}
	// The share HTTP reaches at concurrency 1: HTTP and the in-process engine alternate in short
	// slices, so that both see the same machine (other work on it moves both alike).
	if slices.Contains(o.routes, "/audit") {
		var httpN, engN int
		var httpT, engT, httpLat time.Duration
		before, err := auditSteps(client, base)
		if err != nil {
			return nil, memory{}, err
		}
		for end := time.Now().Add(2 * o.duration); time.Now().Before(end); {
			r := load(client, base, "/audit", token, 1, slice, bodies, &seq)
			httpN, httpT, httpLat = httpN+r.n, httpT+slice, httpLat+r.total
			n, d, err := inProcessN(bodies, slice)
			if err != nil {
				return nil, memory{}, err
			}
			engN, engT = engN+n, engT+d
		}
		mem.http1, mem.inproc = float64(httpN)/httpT.Seconds(), float64(engN)/engT.Seconds()
		after, err := auditSteps(client, base)
		if err != nil {
			return nil, memory{}, err
		}
		mem.steps = stepMeans(before, after)
		if httpN > 0 {
			mem.steps = append(mem.steps, stepMean{step: "client_request", n: uint64(httpN), mean: httpLat / time.Duration(httpN)})
		}
	}
	mem.hwm = rss(pid, "VmHWM:")
	return out, mem, nil
}

// slice is the length of one HTTP or in-process turn when the two are interleaved.
const slice = 250 * time.Millisecond

// memory is what the server held: at rest after its start, and its high-water mark.
type memory struct {
	idle, hwm     int64
	http1, inproc float64 // audits/s at concurrency 1 over HTTP and in process, interleaved
	// steps is the mean time of each step of an audit over HTTP at concurrency 1 (the server's
	// scope_hygiene_audit_step_duration_seconds, read before and after), in the server's order.
	steps []stepMean
}

// load sends requests from c workers for d and measures each one.
func load(client *http.Client, base, route, token string, c int, d time.Duration, bodies [][]byte, seq *atomic.Int64) result {
	var mu sync.Mutex
	var lat []time.Duration
	failed := 0
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				i := seq.Add(1)
				req, _ := http.NewRequest("POST", base+route, bytes.NewReader(bodies[int(i)%len(bodies)]))
				req.Header.Set("Content-Type", "application/json")
				if route == "/audit" {
					req.Header.Set("Authorization", "Bearer "+token)
				} else {
					// One client address per request (the free tier keys on it behind a proxy).
					req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				ok := err == nil
				if ok {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					ok = resp.StatusCode == 200
				}
				el := time.Since(t0)
				mu.Lock()
				if ok {
					lat = append(lat, el)
				} else {
					failed++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r := result{route: route, c: c, n: len(lat), failed: failed, rate: float64(len(lat)) / elapsed.Seconds()}
	for _, l := range lat {
		r.total += l
	}
	if len(lat) > 0 {
		r.p50, r.p99 = lat[len(lat)*50/100], lat[min(len(lat)-1, len(lat)*99/100)]
	}
	return r
}

// rss reads one memory line of /proc/<pid>/status (VmRSS:, RssAnon:, VmHWM:) in bytes, 0 when
// unknown.
func rss(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// stepMean is one audit step's mean duration over a load.
type stepMean struct {
	step string
	mean time.Duration
	n    uint64
}

// stepSum is a step's observation count and total seconds, as /metrics reports them.
type stepSum struct {
	n   uint64
	sum float64
}

// auditSteps reads the v1 audit steps' histograms from the server's /metrics.
func auditSteps(client *http.Client, base string) (map[string]stepSum, error) {
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	out := map[string]stepSum{}
	// The whole request as the server's middleware times it (routing, limits, the handler).
	for _, m := range families["scope_hygiene_http_request_duration_seconds"].GetMetric() {
		if l := labels(m); l["route"] == "/audit" && l["method"] == http.MethodPost {
			out[stepRequest] = stepSum{n: m.GetHistogram().GetSampleCount(), sum: m.GetHistogram().GetSampleSum()}
		}
	}
	fam := families["scope_hygiene_audit_step_duration_seconds"]
	if fam == nil {
		return out, nil
	}
	for _, m := range fam.GetMetric() {
		l := labels(m)
		criteria, step := l["criteria_id"], l["step"]
		if criteria == v1 {
			out[step] = stepSum{n: m.GetHistogram().GetSampleCount(), sum: m.GetHistogram().GetSampleSum()}
		}
	}
	return out, nil
}

// labels are a metric's label values by name.
func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// v1 is the criteria whose audits loadbench sends.
const v1 = "memory-scope-hygiene/v1"

// stepOrder is the order in which an audit's steps run (the server's metrics.AuditStep*), then the
// whole request as the server saw it.
var stepOrder = []string{"read", "slot_wait", "prepare", "audit", "ledger", "sign", "sign_wait", "write", stepRequest}

// stepRequest names the server's whole-request time among the steps.
const stepRequest = "server_request"

// stepMeans is each step's mean between two readings.
func stepMeans(before, after map[string]stepSum) []stepMean {
	var out []stepMean
	for _, step := range stepOrder {
		a, b := after[step], before[step]
		if n := a.n - b.n; n > 0 {
			out = append(out, stepMean{step: step, n: n, mean: time.Duration(math.Round((a.sum - b.sum) / float64(n) * float64(time.Second)))})
		}
	}
	return out
}
