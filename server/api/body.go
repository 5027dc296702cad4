package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// Body reading: memory follows the bytes that arrived, never the length a request declared. A body
// is read into pooled chunks that grow by size class as bytes arrive (4 KiB, 16 KiB, 64 KiB). A
// body without a declared length, or a short one, is then copied once into a buffer of exactly
// its length (the engine may keep pointing into that one, so it is never pooled). A body that
// declared its length and has filled one chunk of each class (84 KiB arrived, a third of the
// largest body) gets its buffer of the declared length then, and the rest is read straight into
// it: less copying, and at most three pooled chunks per body being read. Every byte read is held
// against the server's body budget until the request ends, and the whole body must arrive within
// the body timeout.

// chunkSizes are the size classes of the chunks a body is read into: a silent or slow upload
// holds one 4 KiB chunk, a large one needs about 2 log steps to reach 64 KiB chunks.
var chunkSizes = [...]int{4 << 10, 16 << 10, 64 << 10}

var chunkPools [len(chunkSizes)]sync.Pool

func init() {
	for i, n := range chunkSizes {
		chunkPools[i].New = func() any { b := make([]byte, n); return &b }
	}
}

// idleBodies holds the buffers of audited bodies that nothing reads any more (recycleBody), for
// the next large body that declared its length. A body is the largest thing a request allocates
// (a max-size export is 261 KB of about 750 KB), so a fresh one each time is what paces the
// collector, and a fresh large span is zeroed and often faulted in again after the scavenger
// returned it. The list is bounded and, unlike a sync.Pool, is not emptied by every collection:
// at c = 32 the server collects every few dozen requests. It holds as many as 32 clients keep
// in flight: under load the bodies still arriving hold no buffer yet, so the buffers idle at
// once swing with them, and a list of 8 dropped a quarter of them at c = 32 (296 KB allocated
// an audit, against 216-220 with 32, and 198-205 at c = 1).
var idleBodies = make(chan []byte, 32)

// bodyBuffer is a buffer of length n for a body that declared it: an idle one with room, or a
// new one with room for room bytes (the route's cap), so that once idle it fits any body.
func bodyBuffer(n, room int) []byte {
	select {
	case b := <-idleBodies:
		if cap(b) >= n {
			return b[:n]
		}
	default:
	}
	return make([]byte, n, max(n, room))
}

// recycleBody gives a body's buffer back once nothing can read it again: its export, report and
// signing are done with, and no string of them is kept. Its bytes are cleared first, so an idle
// buffer holds no export.
func recycleBody(b []byte) {
	if cap(b) == 0 {
		return
	}
	clear(b[:cap(b)])
	select {
	case idleBodies <- b[:0]:
	default: // enough are idle: this one is collected
	}
}

// readAtMost reads r to its end or to n bytes, whichever comes first. declared is the length the
// request declared (-1: none). The chunks it reads into come from pools and go back to them; the
// result is a fresh buffer of the bytes read, or one from idleBodies (pooled is then true) for a
// body that declared its length and has filled one chunk of each class.
func readAtMost(r io.Reader, n int, declared int64) (body []byte, pooled bool, err error) {
	var (
		chunks [8]*[]byte
		held   = chunks[:0]
		total  int
	)
	defer func() {
		for i, c := range held {
			chunkPools[min(i, len(chunkSizes)-1)].Put(c)
		}
	}()
	for total < n && err == nil {
		if len(held) == len(chunkSizes) && declared > int64(total) && declared < int64(n) {
			out := bodyBuffer(int(declared), n-1)
			gatherInto(out[:total], held)
			return readDeclared(r, n, out, total)
		}
		class := min(len(held), len(chunkSizes)-1)
		c := chunkPools[class].Get().(*[]byte)
		held = append(held, c)
		buf := (*c)[:min(len(*c), n-total)]
		m := 0
		for m < len(buf) && err == nil {
			var k int
			k, err = r.Read(buf[m:])
			m += k
		}
		*c = (*c)[:cap(*c)]
		total += m
		if m < len(buf) {
			break
		}
	}
	if err != nil && err != io.EOF {
		return nil, false, err
	}
	out := make([]byte, total)
	gatherInto(out, held)
	return out, false, nil
}

// gatherInto copies the bytes read into the chunks, in order, into out (len(out) of them).
func gatherInto(out []byte, held []*[]byte) {
	off := 0
	for i, c := range held {
		size := chunkSizes[min(i, len(chunkSizes)-1)]
		off += copy(out[off:], (*c)[:min(size, len(out)-off)])
	}
}

// readDeclared reads the rest of a body that declared its length into out, a buffer of that
// length from bodyBuffer whose first total bytes are already read, and then reads on to the
// body's end. A body longer than it declared (net/http never passes one on) is read on as any
// other, to n bytes, into a fresh buffer. out goes back to idleBodies unless it is the result.
func readDeclared(r io.Reader, n int, out []byte, total int) ([]byte, bool, error) {
	var err error
	for total < len(out) && err == nil {
		var k int
		k, err = r.Read(out[total:])
		total += k
	}
	if err == nil {
		var probe [1]byte
		var k int
		if k, err = io.ReadFull(r, probe[:]); k == 1 {
			rest, _, rerr := readAtMost(r, n-total-1, -1)
			if rerr != nil {
				recycleBody(out)
				return nil, false, rerr
			}
			longer := append(append(make([]byte, 0, total+1+len(rest)), out[:total]...), probe[0])
			recycleBody(out)
			return append(longer, rest...), false, nil
		}
	}
	if err != nil && err != io.EOF {
		recycleBody(out)
		return nil, false, err
	}
	return out[:total], true, nil
}

// readBody is the body stage: the export, read up to the cap. A declared Content-Length
// over the cap is refused unread; otherwise at most cap+1 bytes are read, into memory that grows
// with the bytes received, under the body budget and the body timeout (guardBody). Once the body
// is in, the route's in-flight slot is taken (admit.go).
func (r *request) readBody() error {
	s, c := r.s, r.c
	limit := s.cfg.Criteria.BodyCap()
	if cl := c.Request().ContentLength; cl > int64(limit) {
		return s.refuse(c, s.cfg.Engine.CheckBodySize(int(min(cl, int64(1)<<40))))
	}
	body, pooled, err := readAtMost(c.Request().Body, limit+1, c.Request().ContentLength)
	if err != nil {
		// One static answer, and the request ends here: nothing is consumed.
		switch {
		case errors.Is(err, errBodyBudget):
			err = s.shedBody(c)
		case errors.Is(err, errBodySlow):
			err = s.slowBody(c)
		default:
			c.Set(keyRule, "body_unreadable")
			err = c.JSON(http.StatusBadRequest, limitError(errBodyUnreadable))
		}
		return answered(err)
	}
	if ref := s.cfg.Engine.CheckBodySize(len(body)); ref != nil {
		return s.refuse(c, ref)
	}
	if ok, err := admit(c); !ok {
		return answered(err)
	}
	r.body = body
	if pooled {
		r.bodyBuf = body
	}
	return nil
}

// Errors of a body read cut by the service's own limits.
var (
	errBodySlow   = errors.New("body did not arrive in time")
	errBodyBudget = errors.New("body budget spent")
)

type bodyHeldKey struct{}

// guardBody holds every request body against the body budget and the body timeout. A body that
// arrives once the budget is spent is refused before a byte of it is read (503, Retry-After);
// bytes read count against the budget until the request ends. The connection's read deadline is
// the body timeout from now, and is lifted when the body has been read to its end. A request the
// MCP route makes on behalf of its own (already held) body passes through.
func (s *Server) guardBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body == nil || req.Body == http.NoBody || req.ContentLength == 0 || req.Context().Value(bodyHeldKey{}) != nil {
			return next(c)
		}
		if !s.bodies.Admit() {
			return s.shedBody(c)
		}
		rc := http.NewResponseController(c.Response())
		if s.cfg.BodyTimeout > 0 {
			_ = rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)) // unsupported in some tests: no deadline
		}
		gb := &guardedBody{ReadCloser: req.Body, s: s, rc: rc}
		defer gb.release()
		req.Body = gb
		c.SetRequest(req.WithContext(context.WithValue(req.Context(), bodyHeldKey{}, true)))
		return next(c)
	}
}

// guardedBody is a request body read under the budget and the body timeout.
type guardedBody struct {
	io.ReadCloser
	s    *Server
	rc   *http.ResponseController
	mu   sync.Mutex
	held int64
	done bool
}

func (g *guardedBody) Read(p []byte) (int, error) {
	n, err := g.ReadCloser.Read(p)
	g.mu.Lock()
	defer g.mu.Unlock()
	if n > 0 && !g.done {
		if !g.s.bodies.Take(int64(n)) {
			return 0, errBodyBudget
		}
		g.held += int64(n)
	}
	switch {
	case err == io.EOF && !g.done:
		g.done = true
		if g.s.cfg.BodyTimeout > 0 {
			_ = g.rc.SetReadDeadline(time.Time{}) // the body is in: the handler's time is its own
		}
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		return n, errBodySlow
	}
	return n, err
}

// release gives the body's bytes back to the budget when the request ends.
func (g *guardedBody) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.s.bodies.Give(g.held)
	g.held = 0
	g.done = true
}

// shedBody answers a body refused by the budget: 503 overloaded with Retry-After. The rest of the
// body is discarded by net/http before the answer (up to 256 KiB, within the body timeout), so
// the client reads the answer rather than a reset.
func (s *Server) shedBody(c echo.Context) error { return answerBodyLimit(c, errBodyBudget) }

// slowBody answers a body that did not arrive within the body timeout: a static 408, and the
// connection closes.
func (s *Server) slowBody(c echo.Context) error { return answerBodyLimit(c, errBodySlow) }

// bodyLimit sets the headers of the static answer to a body read that a service limit cut short
// (errBodyBudget or errBodySlow) and returns the rule it logs, its status and its body; ok is
// false for any other error.
func bodyLimit(h http.Header, err error) (rule string, status int, body map[string]string, ok bool) {
	switch {
	case errors.Is(err, errBodyBudget):
		h.Set("Retry-After", "1")
		return "body_budget", http.StatusServiceUnavailable, limitError(errOverloaded), true
	case errors.Is(err, errBodySlow):
		h.Set("Connection", "close")
		return "body_timeout", http.StatusRequestTimeout, limitError(errBodySlowMsg), true
	}
	return "", 0, nil, false
}

func answerBodyLimit(c echo.Context, err error) error {
	rule, status, body, _ := bodyLimit(c.Response().Header(), err)
	c.Set(keyRule, rule)
	return c.JSON(status, body)
}

type ruleSinkKey struct{}

// AnswerBodyLimit answers a request body whose read a service limit cut short as every POST
// route does (the body budget: 503 overloaded with Retry-After; the body timeout: 408 request
// body too slow, and the connection closes) and reports whether err was one; for any other error
// it writes nothing. It is for a handler the server mounts that reads its own body (POST /mcp).
func AnswerBodyLimit(w http.ResponseWriter, r *http.Request, err error) bool {
	rule, status, body, ok := bodyLimit(w.Header(), err)
	if !ok {
		return false
	}
	if sink, ok := r.Context().Value(ruleSinkKey{}).(*string); ok {
		*sink = rule
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
	return true
}

// mounted serves a handler the server mounts (POST /mcp) as a route: a rule it answers by
// (AnswerBodyLimit) is logged as a route's would be.
func mounted(h http.Handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		var rule string
		r := c.Request()
		h.ServeHTTP(c.Response(), r.WithContext(context.WithValue(r.Context(), ruleSinkKey{}, &rule)))
		if rule != "" {
			c.Set(keyRule, rule)
		}
		return nil
	}
}

// Shedding reports whether the server is refusing request bodies for memory now or did within
// the last few seconds (for readiness: a replica shedding for memory is not ready).
func (s *Server) Shedding() bool {
	return s.bodies.Full() || s.bodies.RefusedWithin(3*time.Second)
}
