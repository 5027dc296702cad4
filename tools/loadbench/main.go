// Command loadbench is the bounded load benchmark of issue 12. It builds and starts the real
// binary (`scope-hygiene serve`) on a loopback port, in house mode, and sends max-size exports
// (gen.MaxSizeExport, every family in turn) to /audit and /precheck at concurrency 1, 8 and 32 for
// a fixed time each, on SQLite and on PostgreSQL. It prints requests per second, p50 and p99 per
// route and level, the server's peak resident memory (and its anonymous part, the Go runtime's
// memory) against the bodies in flight, and beside it the engine's in-process rate on the same
// bodies (the share HTTP reaches at concurrency 1). Each level also prints the CPU time the
// server and this program spent per request (cpu.go), the steadier figure on a shared machine.
// Last, per store, issue 28's three figures against their targets, with the CPU budget the rate
// target leaves (targets.go).
//
// Nothing leaves the machine: the server listens on 127.0.0.1 and every request goes there.
//
//	go run ./tools/loadbench                      # SQLite (on disk, and on tmpfs: no durable write) and PostgreSQL
//	go run ./tools/loadbench -stores sqlite -d 3s
//	go run ./tools/loadbench -memory-limit-mb 40      # the server with a soft memory limit
//	go run ./tools/loadbench -pprof /tmp/prof         # and its CPU and heap profiles under /audit at the highest level
//
// The SQLite ledger is written with synchronous=FULL as shipped; the "sqlite-tmpfs" run keeps the
// same store on /dev/shm, where a sync costs nothing: the figure without the durable write. The
// pre-check runs with -trust-proxy and one X-Forwarded-For address per request, so that the free
// tier's per-address interval never refuses the load.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/scopehygiene/scope-hygiene/gen"
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
	memLimit int    // the server's -memory-limit-mb (0: none)
	pprof    string // where to write the server's profiles under /audit at the highest level ("": none)
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("loadbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.bin, "bin", "", "the scope-hygiene binary (default: build ./tools/scope-hygiene into a temporary directory)")
	fs.StringVar(&o.stores, "stores", "sqlite,sqlite-tmpfs,postgres", "stores to run: sqlite (on disk, synchronous=FULL), sqlite-tmpfs (no durable write), postgres; none: only the in-process engine and the floor under the c = 32 target")
	fs.StringVar(&o.pgDSN, "pg", os.Getenv("SCOPE_HYGIENE_PG_DSN"), "PostgreSQL DSN (env SCOPE_HYGIENE_PG_DSN); a schema of its own is created and dropped")
	fs.DurationVar(&o.duration, "d", 5*time.Second, "time per route and concurrency level")
	fs.IntVar(&o.memLimit, "memory-limit-mb", 0, "the server's -memory-limit-mb, its soft memory limit in MiB (0: none, as shipped)")
	fs.StringVar(&o.pprof, "pprof", "", "a directory: build the server with -tags pprof and write its CPU and heap profiles under /audit at the highest level there")
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

func bench(o options, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "loadbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	floorOnly := strings.TrimSpace(o.stores) == "none"
	if o.bin == "" && !floorOnly {
		o.bin = filepath.Join(dir, "scope-hygiene")
		fmt.Fprintln(stderr, "building ./tools/scope-hygiene")
		args := []string{"build", "-o", o.bin}
		if o.pprof != "" {
			args = append(args, "-tags", "pprof")
		}
		if out, err := exec.Command("go", append(args, "./tools/scope-hygiene")...).CombinedOutput(); err != nil {
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
	inproc, engineCPU, err := inProcess(bodies, o.duration)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "max-size exports: %d families, %d bytes on average; %s per route and level\n\n", len(bodies), avg, o.duration)
	fmt.Fprintf(stdout, "in-process engine (evaluator.PrepareWith an owned body + Audit, one goroutine): %.1f audits/s, %.3f ms of CPU an audit\n\n", inproc, ms(engineCPU))
	fl, err := measureFloor(bodies, dir, o.duration)
	if err != nil {
		return err
	}
	fl.print(stdout, runtime.NumCPU())

	var all []result
	mems := map[string]memory{}
	if floorOnly {
		return nil
	}
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
	printResults(stdout, o, all, mems, avg, engineCPU)
	return nil
}

// printResults prints the table of every store, route and level, then per store the audit's
// steps, the share HTTP reaches of the in-process engine, and the memory against the bodies in
// flight (avg bytes each) at the highest level.
func printResults(stdout io.Writer, o options, all []result, mems map[string]memory, avg int, engineCPU time.Duration) {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "store\troute\tconcurrency\trequests\tfailed\treq/s\tp50 ms\tp99 ms\tpeak RSS MB\tserver CPU ms/req\tloadbench CPU ms/req\tserver KB/req\tGCs/100 req\t")
	for _, r := range all {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.3f\t%.3f\t%.0f\t%.1f\t\n", r.store, r.route, r.c, r.n, r.failed, r.rate,
			ms(r.p50), ms(r.p99), float64(r.peakRSS)/1e6, ms(r.serverCPU), ms(r.clientCPU), r.allocKB, r.gcsPer100)
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
	printMemory(stdout, o.levels, all, mems, avg)
	printTargets(stdout, o, all, mems, avg, engineCPU)
}

// printTargets prints, per store, the figures of issue 28 against their targets.
func printTargets(stdout io.Writer, o options, all []result, mems map[string]memory, avg int, engineCPU time.Duration) {
	maxC := slices.Max(o.levels)
	fmt.Fprintln(stdout)
	for _, r := range all {
		if r.route != "/audit" || r.c != maxC {
			continue
		}
		if t, ok := figures(mems[r.store], r, int64(maxC*avg)); ok {
			// The engine's CPU from the slices interleaved with this store's run, when measured:
			// nearer in time than the one at the start.
			t.engineCPU, t.cores = cmp.Or(mems[r.store].engineCPU, engineCPU), runtime.NumCPU()
			t.print(stdout, r.store)
		}
	}
}

// printMemory prints each store's peak memory during /audit at the highest concurrency against
// the bodies in flight.
func printMemory(stdout io.Writer, levels []int, all []result, mems map[string]memory, avg int) {
	maxC := 0
	for _, c := range levels {
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
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
