package main

import (
	"fmt"
	"syscall"
)

// fdReserve is kept free of client connections for the store, log files and the metrics listener.
const fdReserve = 64

// connCap is the open-connection cap: the configured value, or the descriptor limit less the
// reserve. A cap at or above the descriptor limit would let a flood exhaust it, so it is refused.
func connCap(configured int) (int, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("read the descriptor limit: %w", err)
	}
	avail := int(min(rl.Cur, 1<<30)) - fdReserve
	if avail < 16 {
		return 0, fmt.Errorf("the descriptor limit %d leaves too few connections (want at least %d)", rl.Cur, 16+fdReserve)
	}
	if configured == 0 {
		return avail, nil
	}
	if configured > avail {
		return 0, fmt.Errorf("max-conns %d is above the descriptor limit %d less %d kept for the store", configured, rl.Cur, fdReserve)
	}
	return configured, nil
}

// shedBody is the static body of a connection refused at the cap (schema/service-limit.schema.json).
const shedBody = `{"kind":"error","error":"overloaded"}` + "\n"

// shedResponse is the whole answer to a connection refused at the cap.
var shedResponse = []byte(fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"+
	"Connection: close\r\nContent-Length: %d\r\n\r\n%s", len(shedBody), shedBody))
