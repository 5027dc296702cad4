//go:build faults

package faults_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Outsiders flooding the service (issue 21): slow uploads, a storm of maximum-size pre-checks, a
// reconnecting idle flood and CL+TE smuggling, each against the real binary over loopback,
// bounded in count and time, each printing one line of figures.

// metric reads one unlabelled sample from a Prometheus text page.
func metric(t *testing.T, url, name string) float64 {
	t.Helper()
	r, err := (&http.Client{Timeout: 5 * time.Second}).Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer r.Body.Close()
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("%s not on %s", name, url)
	return 0
}

// srcIP is the loopback address of client i (each has its own free allowance and port range).
func srcIP(base byte, i int) net.IP { return net.IPv4(127, base, byte(i>>8), byte(1+i&0xff)) }

// timedClient makes one request on a new connection from src and returns its status, whether
// it carried Retry-After, and how long it took.
func timedClient(method, url string, body string, src net.IP, timeout time.Duration) (int, bool, time.Duration, error) {
	tr := &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: src}, Timeout: timeout}).DialContext}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: timeout}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	r, err := c.Do(req)
	if err != nil {
		return 0, false, time.Since(start), err
	}
	_, err = io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return r.StatusCode, r.Header.Get("Retry-After") != "", time.Since(start), err
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// TestSlowUploadFlood opens 3,000 connections that each declare a 262,144-byte pre-check and
// send one byte a second (reconnecting when the server closes them). The heap grows by at most
// 200 MB and a new request is answered within 5 s throughout.
func TestSlowUploadFlood(t *testing.T) {
	metricsAddr := freeAddr(t)
	s := start(t, opts{store: backends[0].spec(t), args: []string{"-metrics-addr", metricsAddr}})
	addr := strings.TrimPrefix(s.base, "http://")
	murl := "http://" + metricsAddr + "/metrics"
	base := metric(t, murl, "go_memstats_heap_inuse_bytes")
	baseRSS := metric(t, murl, "process_resident_memory_bytes")

	const conns, declared, run = 3000, 262144, 9 * time.Second
	end := time.Now().Add(run)
	var opened, timedOut, other atomic.Int64
	var wg sync.WaitGroup
	dials := make(chan struct{}, 200) // dials at once
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				dials <- struct{}{}
				c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: srcIP(20, i)}, Timeout: 2 * time.Second}).Dial("tcp", addr)
				<-dials
				if err != nil {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				opened.Add(1)
				fmt.Fprintf(c, "POST /precheck HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", declared)
				br := bufio.NewReader(c)
				for time.Now().Before(end) {
					c.SetReadDeadline(time.Now().Add(time.Second))
					if r, err := http.ReadResponse(br, nil); err == nil {
						if r.StatusCode == http.StatusRequestTimeout {
							timedOut.Add(1)
						} else {
							other.Add(1)
						}
						r.Body.Close()
						break
					} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
						break // closed
					}
					c.SetWriteDeadline(time.Now().Add(time.Second))
					if _, err := c.Write([]byte(" ")); err != nil {
						break
					}
				}
				c.Close()
			}
		}()
	}
	// Sample the heap, and time new requests, while the flood runs.
	var peak, peakRSS float64
	var worst time.Duration
	var answered, failed int
	for i := 0; time.Now().Before(end); i++ {
		peak = max(peak, metric(t, murl, "go_memstats_heap_inuse_bytes"))
		peakRSS = max(peakRSS, metric(t, murl, "process_resident_memory_bytes"))
		if i%2 == 0 {
			code, _, d, err := timedClient("POST", s.base+"/precheck", export, srcIP(21, i), 5*time.Second)
			worst = max(worst, d)
			if err != nil || code != 200 {
				failed++
				t.Errorf("new pre-check during the flood: %d %v after %s", code, err, d)
			} else {
				answered++
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	wg.Wait()
	growth := (peak - base) / 1e6
	fmt.Printf("slow-upload flood: %d connections declaring %d B at 1 B/s for %s (%d opened, %d ended 408, %d other answers): heap in use +%.0f MB (peak %.0f MB), RSS +%.0f MB; %d new pre-checks answered, %d failed, slowest %s\n",
		conns, declared, run, opened.Load(), timedOut.Load(), other.Load(), growth, peak/1e6, (peakRSS-baseRSS)/1e6, answered, failed, worst.Round(time.Millisecond))
	if growth > 200 {
		t.Errorf("heap grew by %.0f MB, want at most 200", growth)
	}
	if worst > 5*time.Second || answered == 0 {
		t.Errorf("new requests: %d answered, slowest %s, want all within 5s", answered, worst)
	}
}

// maxExport is a valid export of 1,000 records just under the 262,144-byte cap.
func maxExport() string {
	var b strings.Builder
	b.WriteString(`{"family":"mem0","form":"full_text","records":[`)
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"r%d","content_text":"%s %d","user_id":"u%d"}`, i, strings.Repeat("prefers green tea ", 11), i%97, i%13)
	}
	b.WriteString(`]}`)
	s := b.String()
	if pad := 262144 - len(s) - 2; pad > 0 {
		s = s[:len(s)-2] + strings.Repeat(" ", pad) + "]}"
	}
	return s
}

// TestPrecheckStorm sends 256 maximum-size pre-checks at once, each from an address of its own:
// every answer is served (200) or shed with Retry-After, and the 99th percentile is under 2.5 s.
func TestPrecheckStorm(t *testing.T) {
	s := start(t, opts{store: backends[0].spec(t)})
	body := maxExport()
	if len(body) > 262144 {
		t.Fatalf("export of %d bytes is over the cap", len(body))
	}
	if code, _, _, err := timedClient("POST", s.base+"/precheck", body, srcIP(30, 999), 15*time.Second); err != nil || code != 200 {
		t.Fatalf("one maximum-size pre-check: %d %v", code, err)
	}
	const n = 256
	var mu sync.Mutex
	var lat []time.Duration
	var served, shed, bad int
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			code, retry, d, err := timedClient("POST", s.base+"/precheck", body, srcIP(31, i), 15*time.Second)
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, d)
			switch {
			case err == nil && code == 200:
				served++
			case err == nil && (code == 503 || code == 429) && retry:
				shed++
			default:
				bad++
				if bad <= 5 {
					t.Errorf("pre-check %d: %d (Retry-After %v) %v after %s", i, code, retry, err, d)
				}
			}
		}()
	}
	close(gate)
	wg.Wait()
	p50, p99 := percentile(lat, 0.5), percentile(lat, 0.99)
	fmt.Printf("pre-check storm: %d concurrent pre-checks of %d B: %d served, %d shed with Retry-After, %d other; p50 %s, p99 %s\n",
		n, len(body), served, shed, bad, p50.Round(time.Millisecond), p99.Round(time.Millisecond))
	if bad > 0 || p99 >= 2500*time.Millisecond {
		t.Errorf("want every answer served or shed with Retry-After and p99 under 2.5s")
	}
}

// floodChildEnv makes a run of this test binary one process of the idle flood (a process holds
// at most floodPerChild connections, well under a descriptor limit of 20,000).
const (
	floodChildEnv = "SCOPE_HYGIENE_FAULTS_FLOOD_CHILD"
	floodPerChild = 15000
)

// floodChild holds n idle connections to addr, each redialled as soon as the server closes it,
// until the deadline; it prints "filled" once every connection has been dialled once, then
// "done <dials> <failed dials>".
func floodChild(addr string, n int, end time.Time, net3 byte) {
	var dials, failed, first atomic.Int64
	var wg sync.WaitGroup
	dialing := make(chan struct{}, 256)
	filled := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := &net.TCPAddr{IP: net.IPv4(127, 40, net3, byte(1+i%4))} // 4 addresses: ports enough
			buf := make([]byte, 1)
			for once := true; time.Now().Before(end); once = false {
				dialing <- struct{}{}
				c, err := (&net.Dialer{LocalAddr: src, Timeout: 2 * time.Second}).Dial("tcp", addr)
				<-dialing
				dials.Add(1)
				if once && first.Add(1) == int64(n) {
					close(filled)
				}
				if err != nil {
					failed.Add(1)
					time.Sleep(50 * time.Millisecond)
					continue
				}
				c.SetReadDeadline(end)
				c.Read(buf) // idle until the server closes it (or the run ends)
				c.Close()
			}
		}()
	}
	select {
	case <-filled:
		fmt.Println("filled")
	case <-time.After(time.Until(end)):
	}
	wg.Wait()
	fmt.Printf("done %d %d\n", dials.Load(), failed.Load())
}

// TestReconnectingIdleFlood runs the binary at a descriptor limit of 20,000 (a connection cap of
// 19,936) while 30,000 idle connections, held by two processes of this test binary, reconnect as
// soon as they are closed; a real client times requests on new connections: their 99th
// percentile is under 1 s.
func TestReconnectingIdleFlood(t *testing.T) {
	if v := os.Getenv(floodChildEnv); v != "" {
		var addr string
		var n int
		var end int64
		var net3 byte
		if _, err := fmt.Sscan(v, &addr, &n, &end, &net3); err != nil {
			t.Fatal(err)
		}
		floodChild(addr, n, time.Unix(0, end), net3)
		return
	}
	// Each flood connection the server closes dials again at once, so about 10,000 connections
	// are always arriving. The listener defers silent ones (TCP_DEFER_ACCEPT) among the
	// half-open connections, which the backlog bounds; past it a SYN is dropped, and a dropped
	// SYN costs its client a 1 s retransmit. So the suite raises the kernel's queues as an
	// operator would (docs/api.md, Limits) before the binary starts (Go reads
	// net.core.somaxconn at its first listen).
	sysctls, how := raiseListenQueues(t, 65535)
	metricsAddr := freeAddr(t)
	s := start(t, opts{store: backends[0].spec(t), nofile: 20000, args: []string{"-metrics-addr", metricsAddr}})
	addr := strings.TrimPrefix(s.base, "http://")
	queue, overflows := acceptQueue(addr), listenOverflows()
	murl := "http://" + metricsAddr + "/metrics"
	baseHeap, baseRSS := metric(t, murl, "go_memstats_heap_inuse_bytes"), metric(t, murl, "process_resident_memory_bytes")
	const flood, run = 30000, 12 * time.Second
	end := time.Now().Add(run)
	type child struct {
		cmd  *exec.Cmd
		out  *bufio.Scanner
		done string
	}
	var children []*child
	filled := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for k := 0; k*floodPerChild < flood; k++ {
		n := min(floodPerChild, flood-k*floodPerChild)
		cmd := exec.Command(os.Args[0], "-test.run=^TestReconnectingIdleFlood$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d %d", floodChildEnv, addr, n, end.UnixNano(), k))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c := &child{cmd: cmd, out: bufio.NewScanner(out)}
		children = append(children, c)
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.out.Scan() {
				switch line := c.out.Text(); {
				case line == "filled":
					filled <- struct{}{}
				case strings.HasPrefix(line, "done "):
					c.done = line
				}
			}
		}()
	}
	for range children {
		select {
		case <-filled:
		case <-time.After(time.Until(end.Add(-4 * time.Second))):
			t.Fatalf("the flood did not dial %d connections in time", flood)
		}
	}
	// Four clients time requests on new connections until the run ends; the heap and resident
	// size are sampled meanwhile.
	var lat []time.Duration
	var failed int
	var peakHeap, peakRSS float64
	var mu sync.Mutex
	var timers sync.WaitGroup
	for k := range 4 {
		timers.Add(1)
		go func() {
			defer timers.Done()
			for time.Now().Before(end.Add(-500 * time.Millisecond)) {
				code, _, d, err := timedClient("GET", s.base+"/criteria", "", net.IPv4(127, 41, 0, byte(1+k)), 5*time.Second)
				mu.Lock()
				lat = append(lat, d)
				if err != nil || code != 200 {
					failed++
				}
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	for time.Now().Before(end.Add(-500 * time.Millisecond)) {
		peakHeap = max(peakHeap, metric(t, murl, "go_memstats_heap_inuse_bytes"))
		peakRSS = max(peakRSS, metric(t, murl, "process_resident_memory_bytes"))
		time.Sleep(250 * time.Millisecond)
	}
	timers.Wait()
	wg.Wait()
	var dials, failedDials int64
	for _, c := range children {
		c.cmd.Wait()
		var d, f int64
		fmt.Sscanf(c.done, "done %d %d", &d, &f)
		dials, failedDials = dials+d, failedDials+f
	}
	overflows = listenOverflows() - overflows
	p50, p99 := percentile(lat, 0.5), percentile(lat, 0.99)
	var over int
	for _, d := range lat {
		if d >= time.Second {
			over++
		}
	}
	fmt.Printf("reconnecting idle flood: %d connections from %d processes against a cap of 19936 for %s (%d dials, %d failed): %d new-connection requests (%d took 1s or more), %d failed, p50 %s, p99 %s; heap in use %.0f MB (+%.0f), RSS %.0f MB (+%.0f); net.core.somaxconn %d and net.ipv4.tcp_max_syn_backlog %d (%s), accept queue %d, %d listen overflows (TcpExt ListenOverflows, whole network namespace)\n",
		flood, len(children), run, dials, failedDials, len(lat), over, failed, p50.Round(time.Millisecond), p99.Round(time.Millisecond),
		peakHeap/1e6, (peakHeap-baseHeap)/1e6, peakRSS/1e6, (peakRSS-baseRSS)/1e6,
		sysctls["net.core.somaxconn"], sysctls["net.ipv4.tcp_max_syn_backlog"], how, queue, overflows)
	if dials <= flood {
		t.Errorf("%d dials: the flood never reconnected (was the cap reached?)", dials)
	}
	if failed > 0 || len(lat) < 10 || p99 >= time.Second {
		t.Errorf("want every new-connection request answered 200 with p99 under 1s")
	}
}

// TestSmuggling sends requests carrying both Content-Length and Transfer-Encoding: chunked, with
// a second request appended: the answer is one 400 and the connection closes (the appended
// request is never answered).
func TestSmuggling(t *testing.T) {
	s := start(t, opts{store: backends[0].spec(t)})
	addr := strings.TrimPrefix(s.base, "http://")
	appended := "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
	// want is the one answer: 400 from the service's guard, or what net/http already answers for
	// a transfer coding it does not support (501) or a malformed header (400).
	cases := map[string]struct {
		req  string
		want int
	}{
		"CL then TE":          {"POST /precheck HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		"TE then CL":          {"POST /precheck HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 400},
		"TE cased":            {"POST /audit HTTP/1.1\r\nHost: x\r\ncontent-length: 40\r\nTRANSFER-ENCODING: Chunked\r\n\r\n0\r\n\r\n", 400},
		"CL covers next":      {"POST /precheck HTTP/1.1\r\nHost: x\r\nContent-Length: 39\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		"GET with both":       {"GET /criteria HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		"TE list (net/http)":  {"POST /precheck HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501},
		"TE twice (net/http)": {"POST /precheck HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501},
		"TE space (net/http)": {"POST /precheck HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n", 400},
	}
	var refused, leaked int
	for name, tc := range cases {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(3 * time.Second))
		io.WriteString(c, tc.req+appended)
		br := bufio.NewReader(c)
		var codes []int
		for {
			r, err := http.ReadResponse(br, nil)
			if err != nil {
				break
			}
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			codes = append(codes, r.StatusCode)
		}
		c.Close()
		if len(codes) == 1 && codes[0] == tc.want {
			refused++
		} else {
			leaked++
			t.Errorf("%s: answers %v, want one %d and the connection closed", name, codes, tc.want)
		}
	}
	fmt.Printf("CL+TE smuggling: %d forms sent with a request appended: %d refused with one answer (400, or net/http's own 501/400) and the connection closed, %d answered more\n",
		len(cases), refused, leaked)
}
