package host

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// A component's port comes from below the kernel's ephemeral range, which any process's outgoing
// connection may take between the pick and the component's bind, and stays reserved to this
// process: another process (here, another open file) cannot lock it, and no port is handed out
// twice.
func TestFreePortIsBelowTheEphemeralRangeAndReservedForThisProcess(t *testing.T) {
	low, err := ephemeralStart()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for range 50 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port >= low || port < 1024 {
			t.Fatalf("port %d: want one below the ephemeral range (%d) and above 1023", port, low)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
		f, err := os.OpenFile(filepath.Join(portLockDir(), strconv.Itoa(port)), os.O_RDWR, 0)
		if err != nil {
			t.Fatalf("port %d has no lock file: %v", port, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			t.Errorf("port %d: another process could reserve it", port)
		}
		_ = f.Close()
	}
}
