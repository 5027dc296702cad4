package limit

import (
	"bytes"
	"container/list"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Conns caps the open connections of one http.Server. At the cap, a new connection evicts the
// connection that has been idle (or silent since it opened) the longest; when every
// connection is busy, the new one gets a static 503 and is closed. A flood of idle
// connections therefore cannot keep real requests out, and the process never runs out of
// file descriptors for its own connections.
//
// Admission costs the same at any number of connections: idle connections sit in a list in
// the order they became idle (a connection that becomes idle again moves to its end), so the
// longest-idle one is always the list's front and nothing is scanned.
//
// Wire it with Listener (wraps the listener), ConnState (http.Server.ConnState), ConnContext
// (http.Server.ConnContext) and Guard (wraps the handler).
type Conns struct {
	max    int
	shed   []byte
	mu     sync.Mutex
	open   int
	idle   list.List // of *capConn, longest idle at the front
	onShed func(evicted bool)
}

// NewConns caps open connections at max. shedBody is the complete HTTP response written to a
// connection refused at the cap; onShed (may be nil) is told of every eviction or refusal.
func NewConns(max int, shedBody []byte, onShed func(evicted bool)) *Conns {
	if onShed == nil {
		onShed = func(bool) {}
	}
	return &Conns{max: max, shed: shedBody, onShed: onShed}
}

// Open is the number of connections held.
func (l *Conns) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Listener wraps ln so that every accepted connection counts against the cap.
func (l *Conns) Listener(ln net.Listener) net.Listener { return &capListener{Listener: ln, l: l} }

// ConnState records which connections are idle; set it as http.Server.ConnState.
func (l *Conns) ConnState(c net.Conn, st http.ConnState) {
	cc, ok := c.(*capConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if cc.closed {
		return
	}
	switch st {
	case http.StateNew, http.StateIdle:
		if cc.elem != nil {
			l.idle.MoveToBack(cc.elem)
		} else {
			cc.elem = l.idle.PushBack(cc)
		}
	case http.StateActive:
		if cc.elem != nil {
			l.idle.Remove(cc.elem)
			cc.elem = nil
		}
	}
}

type capListener struct {
	net.Listener
	l *Conns
}

func (cl *capListener) Accept() (net.Conn, error) {
	for {
		c, err := cl.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if wc, ok := cl.l.admit(c); ok {
			return wc, nil
		}
		// Refused at the cap: a short static answer, then close (bounded, never blocks Accept).
		_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		_, _ = c.Write(cl.l.shed)
		_ = c.Close()
	}
}

func (l *Conns) admit(c net.Conn) (net.Conn, bool) {
	l.mu.Lock()
	var victim *capConn
	if l.open >= l.max {
		front := l.idle.Front()
		if front == nil {
			l.mu.Unlock()
			l.onShed(false)
			return nil, false
		}
		victim = front.Value.(*capConn)
		l.forget(victim) // its slot passes to the new connection now
	}
	wc := &capConn{Conn: c, l: l}
	wc.elem = l.idle.PushBack(wc) // silent since it opened counts as idle
	l.open++
	l.mu.Unlock()
	if victim != nil {
		victim.Conn.Close()
		l.onShed(true)
	}
	return wc, true
}

// forget drops c from the count and the idle list; mu is held.
func (l *Conns) forget(c *capConn) {
	if c.closed {
		return
	}
	c.closed = true
	if c.elem != nil {
		l.idle.Remove(c.elem)
		c.elem = nil
	}
	l.open--
}

type capConn struct {
	net.Conn
	l *Conns
	// elem and closed are guarded by l.mu.
	elem   *list.Element
	closed bool
	sniff  teSniffer
}

func (c *capConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.sniff.feed(p[:n])
	}
	return n, err
}

func (c *capConn) Close() error {
	c.l.mu.Lock()
	c.l.forget(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

type connKey struct{}

// ConnContext keeps the connection in its requests' context, for Guard; set it as
// http.Server.ConnContext.
func (l *Conns) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*capConn); ok {
		return context.WithValue(ctx, connKey{}, cc)
	}
	return ctx
}

// Guard refuses every request of a connection that has sent a request carrying both
// Content-Length and Transfer-Encoding (request smuggling: net/http drops the Content-Length
// and reads the chunked body, so bytes appended after it would be answered as a request of
// their own). The answer is 400 with the static JSON body badRequest, and the connection closes
// without reading further.
func Guard(h http.Handler, badRequest []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cc, ok := r.Context().Value(connKey{}).(*capConn); ok && cc.sniff.smuggled.Load() {
			w.Header().Set("Connection", "close")
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(badRequest)))
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write(badRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// teSniffer watches the bytes a connection receives for a header block (lines up to an empty
// line) that holds both a Content-Length and a Transfer-Encoding field. It keeps a few bytes of
// the current line only; body bytes pass through it too, and a body shaped like such a block
// only marks its own sender's connection.
type teSniffer struct {
	prefix   [len("transfer-encoding:")]byte
	n        int // bytes of prefix filled
	lineLen  int
	cl, te   bool
	smuggled atomic.Bool
}

func (s *teSniffer) feed(p []byte) {
	for len(p) > 0 {
		if s.n < len(s.prefix) {
			for len(p) > 0 && p[0] != '\n' && s.n < len(s.prefix) {
				b := p[0]
				if 'A' <= b && b <= 'Z' {
					b += 'a' - 'A'
				}
				s.prefix[s.n] = b
				s.n++
				s.lineLen++
				p = p[1:]
			}
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.lineLen += len(p)
			return
		}
		s.lineLen += i
		p = p[i+1:]
		s.endLine()
	}
}

func (s *teSniffer) endLine() {
	line := string(s.prefix[:s.n])
	if s.lineLen == 0 || (s.lineLen == 1 && line == "\r") {
		if s.cl && s.te {
			s.smuggled.Store(true)
		}
		s.cl, s.te = false, false
	} else {
		switch {
		case hasPrefix(line, "content-length:"):
			s.cl = true
		case line == "transfer-encoding:":
			s.te = true
		}
	}
	s.n, s.lineLen = 0, 0
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }
