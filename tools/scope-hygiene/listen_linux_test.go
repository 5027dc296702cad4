//go:build linux

package main

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// TestListenPassesSilentConnections: a connection that connects and sends nothing is not handed
// to accept, so one that sends its request after it is accepted first (a silent flood does not
// stand between a new client and the server).
func TestListenPassesSilentConnections(t *testing.T) {
	ln, err := listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for range 8 {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	talker, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer talker.Close()
	if _, err := io.WriteString(talker, "GET / HTTP/1.1\r\n"); err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	select {
	case c, ok := <-accepted:
		if !ok {
			t.Fatal("accept failed")
		}
		defer c.Close()
		if c.RemoteAddr().String() != talker.LocalAddr().String() {
			t.Fatalf("accepted %s first, a connection that sent nothing; want %s, which sent its request", c.RemoteAddr(), talker.LocalAddr())
		}
	case <-time.After(time.Second):
		t.Fatal("the connection that sent its request was not accepted within 1s")
	}
}
