//go:build linux

package main

import "syscall"

// deferAccept sets TCP_DEFER_ACCEPT on a listening socket (listen.go): the kernel hands a
// connection to accept only once its first bytes have arrived, or once secs have passed without.
func deferAccept(fd uintptr, secs int) error {
	return syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_DEFER_ACCEPT, secs)
}
