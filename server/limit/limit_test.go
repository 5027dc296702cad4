package limit

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestInflight(t *testing.T) {
	in := NewInflight(2)
	for i := range 2 {
		if !in.TryAcquire() {
			t.Fatalf("slot %d not granted", i)
		}
	}
	if in.TryAcquire() {
		t.Fatal("a third slot was granted past the cap")
	}
	in.Release()
	if !in.TryAcquire() {
		t.Fatal("a freed slot was not granted")
	}
}

func TestBudget(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	b := NewBudget(6, 2, 0, func() time.Time { return now })
	for i, want := range []bool{true, true, false} {
		if ok, _ := b.Allow("a"); ok != want {
			t.Fatalf("call %d: %v, want %v", i, ok, want)
		}
	}
	if ok, wait := b.Allow("a"); ok || wait != 10*time.Second {
		t.Fatalf("spent budget: %v wait %s, want false 10s", ok, wait)
	}
	if ok, _ := b.Allow("b"); !ok {
		t.Fatal("another address shares the budget")
	}
	now = now.Add(10 * time.Second)
	if ok, _ := b.Allow("a"); !ok {
		t.Fatal("no refill after 10s")
	}
	if ok, _ := NewBudget(0, 0, 0, nil).Allow("a"); !ok {
		t.Fatal("a disabled budget refused")
	}
	// The table stays bounded.
	small := NewBudget(60, 1, 0, func() time.Time { return now })
	for i := range 5000 {
		small.Allow(strings.Repeat("k", i%7) + string(rune(i)))
	}
	if n := len(small.keys); n > 1024 {
		t.Fatalf("%d keys kept, want at most 1024", n)
	}
}

const shed = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"

// serve starts an http.Server on loopback behind a Conns cap; handler blocks while block is open.
func serve(t *testing.T, max int, block chan struct{}) (string, *Conns) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewConns(max, []byte(shed), nil)
	hs := &http.Server{ConnState: l.ConnState, ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/block" {
				<-block
			}
			io.WriteString(w, "ok")
		})}
	go hs.Serve(l.Listener(ln))
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String(), l
}

func get(t *testing.T, addr, path string) (int, error) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	r, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	r.Body.Close()
	return r.StatusCode, nil
}

// TestIdleConnectionsAreEvicted fills the cap with silent connections: a real request still
// gets its answer, at once, and the count never passes the cap.
func TestIdleConnectionsAreEvicted(t *testing.T) {
	addr, l := serve(t, 8, nil)
	var idle []net.Conn
	for range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if code, err := get(t, addr, "/"); err != nil || code != 200 {
		t.Fatalf("real request past an idle flood: %d %v", code, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("real request took %s", d)
	}
	if n := l.Open(); n > 8 {
		t.Fatalf("%d connections held, cap 8", n)
	}
}

// TestBusyConnectionsShedNew: when every held connection is busy, a new one gets the static 503.
func TestBusyConnectionsShedNew(t *testing.T) {
	block := make(chan struct{})
	addr, _ := serve(t, 2, block)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); get(t, addr, "/block") }()
	}
	time.Sleep(200 * time.Millisecond)
	code, err := get(t, addr, "/")
	if err != nil || code != 503 {
		t.Fatalf("past the cap with busy connections: %d %v, want 503", code, err)
	}
	close(block)
	wg.Wait()
	if code, err := get(t, addr, "/"); err != nil || code != 200 {
		t.Fatalf("after the busy ones ended: %d %v", code, err)
	}
}

// fakeConn is a net.Conn that only records Close.
type fakeConn struct {
	net.Conn
	closed bool
}

func (f *fakeConn) Close() error { f.closed = true; return nil }

// TestEvictsLongestIdle: at the cap the connection idle the longest is closed; a connection that
// became idle again is younger; busy ones are never chosen, and with none idle the new one is
// refused.
func TestEvictsLongestIdle(t *testing.T) {
	l := NewConns(3, []byte(shed), nil)
	raw := map[string]*fakeConn{}
	held := map[string]net.Conn{}
	add := func(name string) bool {
		raw[name] = &fakeConn{}
		c, ok := l.admit(raw[name])
		held[name] = c
		return ok
	}
	for _, n := range []string{"a", "b", "c"} {
		add(n)
	}
	l.ConnState(held["a"], http.StateActive)
	l.ConnState(held["a"], http.StateIdle) // a is now the youngest idle: b, c, a
	add("d")
	if !raw["b"].closed || raw["a"].closed || raw["c"].closed {
		t.Fatalf("evicted a=%v b=%v c=%v, want b", raw["a"].closed, raw["b"].closed, raw["c"].closed)
	}
	l.ConnState(held["c"], http.StateActive) // c busy: idle order a, d
	add("e")
	if !raw["a"].closed || raw["c"].closed {
		t.Fatal("the longest idle (a) was not the one evicted, or a busy one was")
	}
	l.ConnState(held["d"], http.StateActive)
	l.ConnState(held["e"], http.StateActive)
	if add("f") {
		t.Fatal("a connection was admitted with every held one busy")
	}
	if n := l.Open(); n != 3 {
		t.Fatalf("%d held, want 3", n)
	}
	held["d"].Close()
	held["d"].Close() // twice: counted once
	if n := l.Open(); n != 2 || !add("g") {
		t.Fatalf("after a close: %d held", n)
	}
}

// BenchmarkAdmitAtCap admits connections at a full cap of n idle connections (each evicts the
// longest idle). The cost per admission does not grow with n.
func BenchmarkAdmitAtCap(b *testing.B) {
	for _, n := range []int{1000, 20000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			l := NewConns(n, []byte(shed), nil)
			for range n {
				l.admit(&fakeConn{})
			}
			b.ResetTimer()
			for range b.N {
				l.admit(&fakeConn{})
			}
		})
	}
}

// sniffRef is the reference of teSniffer: split on LF, drop a CR before it, and flag a block
// (lines up to an empty one) holding a line beginning "content-length:" and one beginning
// "transfer-encoding:", case aside.
func sniffRef(p []byte) bool {
	var cl, te bool
	lines := strings.Split(string(p), "\n")
	for _, line := range lines[:len(lines)-1] { // the last piece has no LF yet
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			if cl && te {
				return true
			}
			cl, te = false, false
			continue
		}
		l := []byte(line)
		for i, b := range l {
			if 'A' <= b && b <= 'Z' {
				l[i] = b + 'a' - 'A'
			}
		}
		cl = cl || strings.HasPrefix(string(l), "content-length:")
		te = te || strings.HasPrefix(string(l), "transfer-encoding:")
	}
	return false
}

func TestSniffer(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", true},
		{"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\ncontent-length: 5\n\n", true},
		{"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nTransfer-Encoding: chunked\r\n\r\n", false},
		{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", false},
		{"POST / HTTP/1.1\r\nX-Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", false},
	} {
		for split := range len(tc.in) {
			var s teSniffer
			s.feed([]byte(tc.in[:split]))
			s.feed([]byte(tc.in[split:]))
			if s.smuggled.Load() != tc.want {
				t.Fatalf("%q split at %d: %v, want %v", tc.in, split, !tc.want, tc.want)
			}
		}
	}
}

// FuzzSniffer: fed in any two pieces, the sniffer agrees with the reference.
func FuzzSniffer(f *testing.F) {
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), uint16(20))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), uint16(3))
	f.Fuzz(func(t *testing.T, p []byte, split uint16) {
		var s teSniffer
		k := int(split) % (len(p) + 1)
		s.feed(p[:k])
		s.feed(p[k:])
		if got, want := s.smuggled.Load(), sniffRef(p); got != want {
			t.Fatalf("sniffer %v, reference %v", got, want)
		}
	})
}
