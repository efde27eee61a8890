package gateway_test

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// procCPU is the CPU time (user and system, all threads) the process pid
// has used, read from /proc/PID/stat in clock ticks of 10 ms (Linux's
// USER_HZ); false where there is no /proc.
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold spaces
	if i < 0 || i+2 > len(b) {
		return 0, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+s) * 10 * time.Millisecond, true
}

// childPID is a child of the process pid (the gateway's one upstream), or
// 0: the children of each of its threads are listed apart.
func childPID(pid int) int {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0
	}
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.Atoi(f[0])
			return n
		}
	}
	return 0
}

// cpuProbe reports the CPU a process spent per call of one arm while a
// benchmark's rounds ran: the direct upstream per direct call, the gateway
// and its upstream per relayed call. A process idles through the other
// arm's blocks, so its figure is its work per call plus what it spends
// idle (little: no timer fires between calls).
type cpuProbe struct {
	name    string // the metric is name-cpu-us/call
	pid     int
	gateway bool // divided by the relayed calls, else by the direct ones
	start   time.Duration
}

func (p *cpuProbe) begin() { p.start, _ = procCPU(p.pid) }

func (p *cpuProbe) report(b *testing.B, directCalls, gatewayCalls int) {
	end, ok := procCPU(p.pid)
	n := directCalls
	if p.gateway {
		n = gatewayCalls
	}
	if !ok || p.pid == 0 || n == 0 {
		return
	}
	b.ReportMetric(float64((end-p.start).Microseconds())/float64(n), p.name+"-cpu-us/call")
}
