//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// dropStartPages tells the kernel that the pages of the binary's code and read-only data read so
// far need not stay resident. The start reads much that serving never touches again: the
// embedded corpus (about 10 MB, read once by the corpus gates), the criteria compiler, the
// migrations. These are clean pages of the executable file: dropping them loses nothing, and the
// pages serving uses fault back in from the page cache at their first use (the kernel refuses
// writes to a running executable, so they come back the same). Writable mappings, and a binary
// already replaced on disk ("(deleted)"), are left alone.
func dropStartPages() error {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return err
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return err
	}
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) != 6 || f[5] != exe || (f[1] != "r--p" && f[1] != "r-xp") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			continue
		}
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED); e != 0 {
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}
