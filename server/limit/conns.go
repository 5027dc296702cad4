package limit

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Conns caps the open connections of one http.Server. At the cap, a new connection evicts the
// connection that has been idle (or silent since it opened) the longest; when every
// connection is busy, the new one gets a static 503 and is closed. A flood of idle
// connections therefore cannot keep real requests out, and the process never runs out of
// file descriptors for its own connections.
//
// Wire it with Listener (wraps the listener) and ConnState (http.Server.ConnState).
type Conns struct {
	max    int
	shed   []byte
	mu     sync.Mutex
	open   map[net.Conn]*connState
	onShed func(evicted bool)
}

type connState struct {
	idle  bool
	since time.Time
}

// NewConns caps open connections at max. shedBody is the complete HTTP response written to a
// connection refused at the cap; onShed (may be nil) is told of every eviction or refusal.
func NewConns(max int, shedBody []byte, onShed func(evicted bool)) *Conns {
	if onShed == nil {
		onShed = func(bool) {}
	}
	return &Conns{max: max, shed: shedBody, open: map[net.Conn]*connState{}, onShed: onShed}
}

// Open is the number of connections held.
func (l *Conns) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.open)
}

// Listener wraps ln so that every accepted connection counts against the cap.
func (l *Conns) Listener(ln net.Listener) net.Listener { return &capListener{Listener: ln, l: l} }

// ConnState records which connections are idle; set it as http.Server.ConnState.
func (l *Conns) ConnState(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.open[c]
	if !ok {
		return
	}
	switch st {
	case http.StateNew, http.StateIdle:
		s.idle, s.since = true, time.Now()
	case http.StateActive:
		s.idle = false
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
	var victim net.Conn
	if len(l.open) >= l.max {
		var oldest time.Time
		for oc, s := range l.open {
			if s.idle && (victim == nil || s.since.Before(oldest)) {
				victim, oldest = oc, s.since
			}
		}
		if victim == nil {
			l.mu.Unlock()
			l.onShed(false)
			return nil, false
		}
		delete(l.open, victim) // its slot passes to the new connection now
	}
	wc := &capConn{Conn: c, l: l}
	l.open[wc] = &connState{idle: true, since: time.Now()}
	l.mu.Unlock()
	if victim != nil {
		victim.(*capConn).Conn.Close()
		l.onShed(true)
	}
	return wc, true
}

type capConn struct {
	net.Conn
	l    *Conns
	once sync.Once
}

func (c *capConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.open, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}
