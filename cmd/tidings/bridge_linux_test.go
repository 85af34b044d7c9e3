package main

import (
	"fmt"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchOpens reports every open of the files (Linux inotify: IN_OPEN).
func watchOpens(t *testing.T, paths ...string) func() []string {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	names := map[int]string{}
	for _, p := range paths {
		wd, err := unix.InotifyAddWatch(fd, p, unix.IN_OPEN|unix.IN_ACCESS)
		if err != nil {
			t.Fatal(err)
		}
		names[wd] = p
	}
	t.Cleanup(func() { unix.Close(fd) })
	return func() []string {
		var out []string
		buf := make([]byte, 64<<10)
		for {
			n, err := unix.Read(fd, buf)
			if n <= 0 || err != nil {
				return out
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				out = append(out, fmt.Sprintf("%s (mask %#x)", names[int(ev.Wd)], ev.Mask))
				off += unix.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
}
