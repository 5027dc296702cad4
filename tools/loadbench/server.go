package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// benchServer is one started `scope-hygiene serve` in house mode: where it answers, the house
// token, its process and the HTTP client that loads it.
type benchServer struct {
	base, token string
	pprof       string // the profiler's base URL ("": none; a binary built with -tags pprof)
	pid         int
	client      *http.Client
	cmd         *exec.Cmd
	exited      chan error
}

// startServer starts the binary's serve on a free loopback port with the store spec (its key
// files in a directory of its own under dir) and waits until it answers /healthz.
func startServer(o options, name, spec, dir string) (*benchServer, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	token := randomHex(32)
	work, err := os.MkdirTemp(dir, name+"-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.bin, "serve", "-addr", addr, "-store", spec, "-key-file", filepath.Join(work, "key.pem"),
		"-siwx-key-file", filepath.Join(work, "siwx.key"), "-trust-proxy", "-max-inflight-audits", "64",
		"-request-timeout", "30s", "-memory-limit-mb", strconv.Itoa(o.memLimit))
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "SCOPE_HYGIENE_HOUSE_TOKEN="+token, "SCOPE_HYGIENE_LOG_LEVEL=warn")
	pprofAddr := ""
	if o.pprof != "" {
		if pprofAddr, err = freeAddr(); err != nil {
			return nil, err
		}
		cmd.Env = append(cmd.Env, "SCOPE_HYGIENE_PPROF_ADDR="+pprofAddr)
	}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &benchServer{base: "http://" + addr, token: token, pprof: pprofURL(pprofAddr), pid: cmd.Process.Pid, cmd: cmd, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	// Buffers of 64 KiB each way: the bodies are 261 KB and the reports about 110 KB, and the
	// default 4 KiB buffers would measure this program's system calls as much as the service.
	s.client = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64,
		WriteBufferSize: 64 << 10, ReadBufferSize: 64 << 10}}
	if err := s.awaitHealthy(&logs); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// awaitHealthy polls /healthz until it answers 200, the server exits, or a minute passes.
func (s *benchServer) awaitHealthy(logs *bytes.Buffer) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		if r, err := s.client.Get(s.base + "/healthz"); err == nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			if r.StatusCode == 200 {
				return nil
			}
		}
		select {
		case err := <-s.exited:
			s.exited <- err // stop waits for it too
			return fmt.Errorf("server exited (%v): %s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server not ready: %s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the server with SIGTERM, and kills it when it has not exited within 20 seconds.
func (s *benchServer) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// storeSpec is the -store value of one run, and what removes it.
func storeSpec(name, dir, pgDSN string) (string, func(), error) {
	switch name {
	case "sqlite":
		return "sqlite:" + filepath.Join(dir, "ledger.db"), func() {}, nil
	case "sqlite-tmpfs":
		shm, err := os.MkdirTemp("/dev/shm", "loadbench-")
		if err != nil {
			return "", nil, fmt.Errorf("no /dev/shm: %w", err)
		}
		return "sqlite:" + filepath.Join(shm, "ledger.db"), func() { os.RemoveAll(shm) }, nil
	case "postgres":
		if pgDSN == "" {
			return "", nil, errors.New("no DSN (-pg or SCOPE_HYGIENE_PG_DSN)")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, pgDSN)
		if err != nil {
			return "", nil, fmt.Errorf("connect: %w", err)
		}
		schema := "loadbench_" + randomHex(6)
		if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
			conn.Close(ctx)
			return "", nil, fmt.Errorf("create schema: %w", err)
		}
		conn.Close(ctx)
		u, err := url.Parse(pgDSN)
		if err != nil {
			return "", nil, err
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if conn, err := pgx.Connect(ctx, pgDSN); err == nil {
				conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
				conn.Close(ctx)
			}
		}, nil
	}
	return "", nil, fmt.Errorf("unknown store %q", name)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// freeAddr is a loopback address with a port free now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func pprofURL(addr string) string {
	if addr == "" {
		return ""
	}
	return "http://" + addr + "/debug/pprof/"
}

// profile fetches one of the server's profiles (a CPU profile of seconds, when seconds > 0) into
// path.
func (s *benchServer) profile(name string, seconds int, path string) error {
	u := s.pprof + name
	if seconds > 0 {
		u += "?seconds=" + strconv.Itoa(seconds)
	}
	resp, err := s.client.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", name, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
