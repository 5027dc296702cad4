//go:build faults

package faults_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/store/postgres"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
	"github.com/scopehygiene/scope-hygiene/server/store/storetest"
)

// houseToken is the operator token the suite's audits carry (house audits write ledger rows
// exactly as paid ones do, without a chain).
const houseToken = "fault-suite-house-token-0123456789abcdef"

var bin string

func TestMain(m *testing.M) {
	if os.Getenv(floodChildEnv) != "" { // one process of an idle flood (flood_test.go): no binary
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "faults")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "scope-hygiene")
	if out, err := exec.Command("go", "build", "-o", bin, "../tools/scope-hygiene").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuffer collects a child's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// server is one run of the real binary.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	logs   *syncBuffer
	exited chan error
}

type opts struct {
	store string
	dir   string
	args  []string
	// nofile, when set, lowers the process's descriptor limit (soft and hard) before exec.
	nofile int
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs `serve` and waits until /readyz answers 200.
func start(t *testing.T, o opts) *server {
	t.Helper()
	s := launch(t, o)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r, err := http.Get(s.base + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return s
			}
		}
		select {
		case err := <-s.exited:
			s.exited <- err
			t.Fatalf("server exited (%v):\n%s", err, s.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready:\n%s", s.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// launch starts `serve` without waiting.
func launch(t *testing.T, o opts) *server {
	t.Helper()
	addr := freeAddr(t)
	if o.dir == "" {
		o.dir = t.TempDir()
	}
	args := append([]string{"serve", "-addr", addr, "-store", o.store, "-key-file", filepath.Join(o.dir, "key.pem")}, o.args...)
	var cmd *exec.Cmd
	if o.nofile > 0 {
		cmd = exec.Command("sh", append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, o.nofile), bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	cmd.Dir = o.dir
	cmd.Env = append(os.Environ(), "SCOPE_HYGIENE_HOUSE_TOKEN="+houseToken, "SCOPE_HYGIENE_LOG_LEVEL=warn")
	s := &server{t: t, cmd: cmd, base: "http://" + addr, logs: &syncBuffer{}, exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() { s.kill() })
	return s
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill() {
	if s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Kill()
	select {
	case <-s.exited:
		s.exited <- nil // later callers see it gone too
	case <-time.After(10 * time.Second):
		s.t.Errorf("process did not exit after SIGKILL")
	}
}

var client = &http.Client{Timeout: 15 * time.Second}

const export = `{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"prefers tea","user_id":"alice"},` +
	`{"id":"r2","content_text":"prefers tea","user_id":"bob"},{"id":"r3","content_text":"lives in Lyon","user_id":"alice"}]}`

// houseAudit sends one house audit.
func (s *server) houseAudit() (*http.Response, []byte, error) {
	req, _ := http.NewRequest("POST", s.base+"/audit", strings.NewReader(export))
	req.Header.Set("Authorization", "Bearer "+houseToken)
	req.Header.Set("Content-Type", "application/json")
	r, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	return r, b, err
}

// precheckFrom sends one free pre-check from the loopback address src (the free tier is keyed by
// the client address when the body names no caller).
func (s *server) precheckFrom(src net.IP) (int, error) {
	tr := &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: src}, Timeout: 5 * time.Second}).DialContext}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 15 * time.Second}
	r, err := c.Post(s.base+"/precheck", "application/json", strings.NewReader(export))
	if err != nil {
		return 0, err
	}
	defer r.Body.Close()
	if _, err := io.ReadAll(r.Body); err != nil {
		return 0, err
	}
	return r.StatusCode, nil
}

func (s *server) get(path string) (int, http.Header, []byte) {
	s.t.Helper()
	r, err := client.Get(s.base + path)
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, r.Header, b
}

// backend is one store the suite runs against.
type backend struct {
	name string
	// spec returns the store flag for a fresh, empty store.
	spec func(t *testing.T) string
}

var backends = []backend{
	{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "ledger.db") }},
	{"postgres", func(t *testing.T) string {
		if os.Getenv("SCOPE_HYGIENE_PG_DSN") == "" {
			t.Skip("SCOPE_HYGIENE_PG_DSN not set: the PostgreSQL half of the fault suite is skipped")
		}
		return storetest.PostgresDSN(t)
	}},
}

// openStore opens the store the binary used, from the test.
func openStore(t *testing.T, spec string) store.Store {
	t.Helper()
	var st store.Store
	var err error
	if p, ok := strings.CutPrefix(spec, "sqlite:"); ok {
		st, err = sqlite.OpenExisting(context.Background(), p)
	} else {
		st, err = postgres.Open(context.Background(), spec)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func allLedger(t *testing.T, st store.Store) []store.LedgerEntry {
	t.Helper()
	var out []store.LedgerEntry
	var after int64
	for {
		rows, err := st.ListLedger(context.Background(), after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			return out
		}
		out = append(out, rows...)
		after = rows[len(rows)-1].ID
	}
}

// listenQueueSysctls bound a listener's queues: net.core.somaxconn its accept queue (Go's
// net.Listen asks for exactly that), net.ipv4.tcp_max_syn_backlog its half-open connections
// (docs/api.md, Limits).
var listenQueueSysctls = []string{"net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog"}

func sysctlPath(name string) string {
	return "/proc/sys/" + strings.ReplaceAll(name, ".", "/")
}

func readSysctl(name string) (int, error) {
	b, err := os.ReadFile(sysctlPath(name))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// raiseListenQueues raises each of listenQueueSysctls to at least want for the test, as an
// operator would before starting the service, when it can (root, a writable /proc/sys; the
// network namespace's values, so other listeners on the machine see them too), and restores the
// values it found when the test ends. It returns the values in force and how they got there.
func raiseListenQueues(t *testing.T, want int) (inForce map[string]int, how string) {
	t.Helper()
	inForce = map[string]int{}
	how = "as found"
	for _, name := range listenQueueSysctls {
		old, err := readSysctl(name)
		if err != nil {
			inForce[name] = -1
			continue
		}
		inForce[name] = old
		if old >= want {
			continue
		}
		if err := os.WriteFile(sysctlPath(name), []byte(strconv.Itoa(want)), 0o644); err != nil {
			how = "as found (not raised: " + strings.TrimPrefix(err.Error(), "open ") + ")"
			continue
		}
		t.Cleanup(func() {
			if err := os.WriteFile(sysctlPath(name), []byte(strconv.Itoa(old)), 0o644); err != nil {
				t.Errorf("restore %s to %d: %v", name, old, err)
			}
		})
		if v, err := readSysctl(name); err == nil {
			inForce[name] = v
		}
		how = "raised by the suite"
	}
	return inForce, how
}

// listenOverflows is the network namespace's count of connections dropped because a listener's
// accept queue was full (TcpExt ListenOverflows in /proc/net/netstat), or -1.
func listenOverflows() int64 {
	b, err := os.ReadFile("/proc/net/netstat")
	if err != nil {
		return -1
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i+1 < len(lines); i++ {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || names[0] != "TcpExt:" || len(values) != len(names) || values[0] != "TcpExt:" {
			continue
		}
		for j, n := range names {
			if n == "ListenOverflows" {
				v, err := strconv.ParseInt(values[j], 10, 64)
				if err != nil {
					return -1
				}
				return v
			}
		}
	}
	return -1
}

// acceptQueue is the accept queue the kernel gave the listener on addr (ss's Send-Q of a
// listening socket), or -1 where ss is missing.
func acceptQueue(addr string) int {
	out, err := exec.Command("ss", "-Hltn", "sport = :"+addr[strings.LastIndexByte(addr, ':')+1:]).Output()
	if err != nil {
		return -1
	}
	f := strings.Fields(string(out))
	if len(f) < 3 {
		return -1
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return -1
	}
	return n
}
