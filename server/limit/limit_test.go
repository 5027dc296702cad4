package limit

import (
	"bufio"
	"io"
	"net"
	"net/http"
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
