package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPU time, the figure this shared 2-core machine measures steadily: rates move with whatever
// else runs, the CPU an audit costs much less. The c = 32 target (1.5× the in-process
// single-thread rate) is a CPU budget: on n cores the server and this load generator together
// may spend at most n/1.5 times the in-process engine's CPU on an HTTP audit.

// clockTick is the unit of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// processCPU is the user plus system CPU time process pid has used, 0 when unknown.
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; the fields after its ')' start at field 3.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64) // utime, field 14
	s, err2 := strconv.ParseInt(f[12], 10, 64) // stime, field 15
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(u+s) * clockTick
}

// selfCPU is the user plus system CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// perRequest is total spread over n requests (0 when there were none).
func perRequest(total time.Duration, n int) time.Duration {
	if n <= 0 {
		return 0
	}
	return total / time.Duration(n)
}
