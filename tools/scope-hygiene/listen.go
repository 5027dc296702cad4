package main

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The service's listener and the kernel queues in front of it (docs/api.md, Limits).
//
// A reconnecting flood of idle connections larger than the connection cap keeps thousands of
// connections arriving at once. Two kernel queues hold them before accept: half-open
// connections, and connections complete but not yet accepted. An accept queue that overflows
// drops SYNs, and each dropped SYN costs its client a 1 s retransmit; an accept queue long
// enough to hold the flood makes every new client wait behind it. With TCP_DEFER_ACCEPT a
// connection reaches the accept queue only once its first bytes arrive (an HTTP client sends
// its request at once) or after deferAcceptSecs of silence, so the silent flood waits among the
// half-open connections, which the listen backlog bounds, and new requests pass it.

// deferAcceptSecs is how long the kernel holds a silent new connection before handing it to
// accept anyway (it rounds up to its SYN-ACK retransmit schedule: about 3 s).
const deferAcceptSecs = 2

// somaxconnPath is the kernel's cap on a listener's backlog.
const somaxconnPath = "/proc/sys/net/core/somaxconn"

// sendBuffer is the send buffer of every accepted connection, room for a max-size report (about
// 125 KB) with the kernel's own overhead (it doubles what it is given). With the default 16 KiB,
// which grows only as the connection proves fast, writing a report waits on the client's reads
// several times over, each a wake-up of both sides; with this one it is handed over at once and
// its buffer goes back for the next report to be signed in while the client reads.
const sendBuffer = 256 << 10

// listen opens the service's TCP listener with TCP_DEFER_ACCEPT where the system has it. Its
// backlog is net.core.somaxconn: Go's net.Listen asks for exactly that (read once, at the
// process's first listen) and the kernel caps any request at it, so asking for more changes
// nothing; an operator raises the sysctl and restarts.
func listen(ctx context.Context, addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = deferAccept(fd, deferAcceptSecs)
			// Accepted connections inherit the listener's send buffer. Best effort: a system
			// that refuses it answers with its own (autotuned) buffer.
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, sendBuffer)
		}); err != nil {
			return err
		}
		return serr
	}}
	return lc.Listen(ctx, "tcp", addr)
}

// listenBacklog is the backlog the listener asks for and gets (net.core.somaxconn); ok is false
// where it cannot be read.
func listenBacklog() (n int, ok bool) {
	b, err := os.ReadFile(somaxconnPath)
	if err != nil {
		return 0, false
	}
	n, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}
