package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
)

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
	// serverCPU and clientCPU are the CPU time the server and this program used during the
	// load, each over every request sent (answered or not).
	serverCPU, clientCPU time.Duration
	// allocKB and gcsPer100 are what the server's runtime allocated per request and the
	// collections it completed per 100 requests during the load.
	allocKB, gcsPer100 float64
}

// runStore starts the server on one store and runs every route and level against it.
func runStore(o options, name, spec, dir string, bodies [][]byte, stderr io.Writer) ([]result, memory, error) {
	srv, err := startServer(o, name, spec, dir)
	if err != nil {
		return nil, memory{}, err
	}
	defer srv.stop()
	fmt.Fprintf(stderr, "%s: server ready\n", name)
	mem := memory{idle: rss(srv.pid, "VmRSS:")}
	var out []result
	var seq atomic.Int64
	for _, route := range o.routes {
		for _, c := range o.levels {
			prof := srv.profileDuring(o, name, route, c)
			r := srv.loadSampled(route, c, o.duration, bodies, &seq)
			if err := prof(); err != nil {
				fmt.Fprintf(stderr, "%s: profile: %v\n", name, err)
			}
			r.store = name
			fmt.Fprintf(stderr, "%s %s c=%d: %.1f req/s\n", name, route, c, r.rate)
			out = append(out, r)
		}
	}
	if slices.Contains(o.routes, "/audit") {
		if err := srv.interleave(&mem, o.duration, bodies, &seq); err != nil {
			return nil, memory{}, err
		}
	}
	mem.hwm = rss(srv.pid, "VmHWM:")
	return out, mem, nil
}

// profileDuring starts the server's CPU profile for a load of /audit at the highest level when
// profiles are asked for, and its heap profile halfway; the function it returns waits for both.
func (s *benchServer) profileDuring(o options, store, route string, c int) func() error {
	if s.pprof == "" || route != "/audit" || c != slices.Max(o.levels) {
		return func() error { return nil }
	}
	cpu, heap := make(chan error, 1), make(chan error, 1)
	secs := max(1, int(o.duration/time.Second)-1)
	go func() { cpu <- s.profile("profile", secs, filepath.Join(o.pprof, store+"-cpu.pprof")) }()
	go func() {
		// The heap in the middle of the load (as of the last collection): what the requests hold.
		time.Sleep(o.duration / 2)
		heap <- s.profile("heap", 0, filepath.Join(o.pprof, store+"-heap.pprof"))
	}()
	return func() error { return errors.Join(<-cpu, <-heap) }
}

// loadSampled is load with the server's resident set sampled while the load runs: the peak under
// this load, not the start's high-water mark (the corpus re-pass at start is measured apart).
func (s *benchServer) loadSampled(route string, c int, d time.Duration, bodies [][]byte, seq *atomic.Int64) result {
	stop := make(chan struct{})
	peak := make(chan [2]int64, 1)
	go func() {
		var p, a int64
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			r, anon := resident(s.pid)
			p, a = max(p, r), max(a, anon)
			select {
			case <-stop:
				peak <- [2]int64{p, a}
				return
			case <-t.C:
			}
		}
	}()
	rt0 := readRuntime(s.client, s.base)
	server, self := processCPU(s.pid), selfCPU()
	r := load(s.client, s.base, route, s.token, c, d, bodies, seq)
	r.serverCPU = perRequest(processCPU(s.pid)-server, r.n+r.failed)
	r.clientCPU = perRequest(selfCPU()-self, r.n+r.failed)
	if rt1, sent := readRuntime(s.client, s.base), float64(r.n+r.failed); sent > 0 && rt1.alloc > 0 {
		r.allocKB, r.gcsPer100 = (rt1.alloc-rt0.alloc)/sent/1e3, float64(rt1.gcs-rt0.gcs)/sent*100
	}
	close(stop)
	pk := <-peak
	r.peakRSS, r.peakAnon = pk[0], pk[1]
	return r
}

// interleave measures the share HTTP reaches at concurrency 1: HTTP and the in-process engine
// alternate in short slices for twice d, so that both see the same machine (other work on it
// moves both alike). It notes both rates and the audit's step means over HTTP in mem.
func (s *benchServer) interleave(mem *memory, d time.Duration, bodies [][]byte, seq *atomic.Int64) error {
	var httpN, engN int
	var httpT, engT, httpLat, engCPU time.Duration
	before, err := auditSteps(s.client, s.base)
	if err != nil {
		return err
	}
	for end := time.Now().Add(2 * d); time.Now().Before(end); {
		r := load(s.client, s.base, "/audit", s.token, 1, slice, bodies, seq)
		httpN, httpT, httpLat = httpN+r.n, httpT+slice, httpLat+r.total
		cpu := selfCPU()
		n, took, err := inProcessN(bodies, slice)
		if err != nil {
			return err
		}
		engN, engT, engCPU = engN+n, engT+took, engCPU+selfCPU()-cpu
	}
	mem.http1, mem.inproc = float64(httpN)/httpT.Seconds(), float64(engN)/engT.Seconds()
	mem.engineCPU = perRequest(engCPU, engN)
	after, err := auditSteps(s.client, s.base)
	if err != nil {
		return err
	}
	mem.steps = stepMeans(before, after)
	if httpN > 0 {
		mem.steps = append(mem.steps, stepMean{step: "client_request", n: uint64(httpN), mean: httpLat / time.Duration(httpN)})
	}
	return nil
}

// slice is the length of one HTTP or in-process turn when the two are interleaved.
const slice = 250 * time.Millisecond

// memory is what the server held: at rest after its start, and its high-water mark.
type memory struct {
	idle, hwm     int64
	http1, inproc float64       // audits/s at concurrency 1 over HTTP and in process, interleaved
	engineCPU     time.Duration // the in-process engine's CPU time an audit in those slices
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

// resident is the resident set of process pid and its anonymous part in bytes (0 when unknown),
// from /proc/<pid>/statm: the same figures as VmRSS and RssAnon (resident less the file-backed and
// shared pages), from one short line. It is read every 20 ms during a load, and this program's
// CPU counts against the server it shares the machine with.
func resident(pid int) (rss, anon int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return 0, 0
	}
	r, err1 := strconv.ParseInt(f[1], 10, 64)
	shared, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0
	}
	page := int64(os.Getpagesize())
	return r * page, (r - shared) * page
}

// inProcess is the engine's rate on the bodies, in this process, on one goroutine, and the CPU
// time this process used per audit meanwhile (the collector's included).
func inProcess(bodies [][]byte, d time.Duration) (float64, time.Duration, error) {
	cpu := selfCPU()
	n, took, err := inProcessN(bodies, d)
	if err != nil {
		return 0, 0, err
	}
	return float64(n) / took.Seconds(), perRequest(selfCPU()-cpu, n), nil
}

var (
	psOnce sync.Once
	ps     *rules.ProgramSet
	psErr  error
	inSeq  int
)

// loadProgramSet compiles the embedded criteria once, for every in-process run.
func loadProgramSet() { ps, psErr = rules.Default() }

// inProcessN audits the bodies in turn for d; it returns how many and how long they took.
func inProcessN(bodies [][]byte, d time.Duration) (int, time.Duration, error) {
	psOnce.Do(loadProgramSet)
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
