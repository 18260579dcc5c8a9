package loadgen

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat;
// it is 100 on every Linux the generator runs on.
const clockTicks = 100

// procSampler reads a process's CPU time at start and stop, and samples
// its resident set every 50 ms in between.
type procSampler struct {
	pid     int
	cpu0    int64
	done    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	peakRSS int64
}

// startSampler reads pid's CPU time and starts sampling its memory.
func startSampler(pid int) (*procSampler, error) {
	cpu, err := procCPUTicks(pid)
	if err != nil {
		return nil, err
	}
	s := &procSampler{pid: pid, cpu0: cpu, done: make(chan struct{})}
	s.sample()
	s.wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-tick.C:
				s.sample()
			}
		}
	})
	return s, nil
}

// sample records pid's resident set if it is the largest seen.
func (s *procSampler) sample() {
	rss, _, err := procMem(s.pid)
	if err == nil {
		s.mu.Lock()
		s.peakRSS = max(s.peakRSS, rss)
		s.mu.Unlock()
	}
}

// stop ends the sampling and returns what the process cost since
// startSampler (CPUmsPerOp is left to the caller).
func (s *procSampler) stop() (*ServerStats, error) {
	s.sample()
	close(s.done)
	s.wg.Wait()
	cpu, err := procCPUTicks(s.pid)
	if err != nil {
		return nil, err
	}
	_, hwm, err := procMem(s.pid)
	if err != nil {
		return nil, err
	}
	return &ServerStats{PID: s.pid, CPUms: float64(cpu-s.cpu0) * 1000 / clockTicks,
		PeakRSSBytes: s.peakRSS, HWMBytes: hwm}, nil
}

// procCPUTicks is utime+stime of pid, in clock ticks.
func procCPUTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("server pid: %w", err)
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state); utime is field 14, stime 15
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	u, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	s, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return u + s, nil
}

// procMem is VmRSS and VmHWM of pid, in bytes.
func procMem(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("server pid: %w", err)
	}
	for line := range bytes.Lines(b) {
		var dst *int64
		switch {
		case bytes.HasPrefix(line, []byte("VmRSS:")):
			dst = &rss
		case bytes.HasPrefix(line, []byte("VmHWM:")):
			dst = &hwm
		default:
			continue
		}
		f := bytes.Fields(line)
		if len(f) >= 2 {
			kb, _ := strconv.ParseInt(string(f[1]), 10, 64)
			*dst = kb << 10
		}
	}
	return rss, hwm, nil
}
