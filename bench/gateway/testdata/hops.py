#!/usr/bin/env python3
"""Where a relayed call's time goes, hop by hop, from a perf trace.

Reads the output of `perf script` over a system-wide trace of read/write
system calls taken while BenchmarkGatewayBinary or BenchmarkGatewayFloor
runs, and follows each call of 1 KB or more through the processes:

  client write -> relay read -> relay write -> upstream read
  -> upstream write -> relay read -> relay write -> client read

(the relay being the gateway, or one of the floor benchmark's relays), and
each direct call: client write -> upstream read -> upstream write -> client
read. It prints the median, mean and 90th percentile of every step, in µs.
With --pid it also counts, per relayed call, the relay process's
switch-ins (its threads put on a CPU), futex calls and nanosleeps (the Go
runtime's monitor thread and idle threads looking for work).

Record (as root; tracefs mounted at /sys/kernel/tracing):

  cd bench/gateway
  go test -run '^$' -bench GatewayBinary -benchtime 100x . &
  sleep 4; perf record -o /tmp/gw.data -a --exclude-perf \\
    -e 'syscalls:sys_enter_write,syscalls:sys_exit_write,syscalls:sys_enter_read,syscalls:sys_exit_read' \\
    -e 'sched:sched_switch,sched:sched_wakeup,syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep' \\
    -- sleep 1
  wait
  perf script -i /tmp/gw.data -F comm,pid,tid,cpu,time,event,trace > /tmp/gw.txt

The processes, by the order they started: the benchmark (the client,
most events), the direct arm's upstream, then each relay and the upstream
it started. Then:

  python3 testdata/hops.py /tmp/gw.txt CLIENT RELAY RELAYS_UPSTREAM DIRECT_UPSTREAM
"""
import re
import statistics as st
import sys

LINE = re.compile(r'\s*(\S+)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)')


def count(rest):
    m = re.search(r'count: 0x([0-9a-f]+)', rest)
    return int(m.group(1), 16) if m else 0


def ret(rest):
    try:
        return int(rest.strip(), 16)
    except ValueError:
        return 0


def main():
    path, cl, relay, up, dup = sys.argv[1:6]
    events = []
    for line in open(path):
        m = LINE.match(line)
        if m:
            comm, pid, tid, cpu, t, e, rest = m.groups()
            events.append((float(t) * 1e6, pid, tid, e, rest))
    W, R = 'syscalls:sys_enter_write', 'syscalls:sys_exit_read'
    relayed = [('client', W, cl), ('relay', R, relay), ('relay', W, relay), ('upstream', R, up),
               ('upstream', W, up), ('relay', R, relay), ('relay', W, relay), ('client', R, cl)]
    straight = [('client', W, cl), ('upstream', R, dup), ('upstream', W, dup), ('client', R, cl)]

    def follow(steps):
        calls, ts, i = [], [], 0
        for t, pid, tid, e, rest in events:
            who, ev, p = steps[i]
            if e == ev and pid == p and (count(rest) if ev == W else ret(rest)) >= 1000:
                ts.append(t)
                i += 1
                if i == len(steps):
                    calls.append(ts)
                    ts, i = [], 0
            elif i > 0 and e == W and pid == cl and count(rest) >= 1000:
                ts, i = [t], 1  # a new call began: the last one was not followed whole
        return [c for c in calls if c[-1] - c[0] < 5000]

    for label, steps in (('relayed', relayed), ('direct', straight)):
        calls = follow(steps)
        if not calls:
            print(label, 'no calls found')
            continue
        print('%s: %d calls, first write to last read: median %.0f µs' % (label, len(calls), st.median(c[-1] - c[0] for c in calls)))
        for k in range(len(steps) - 1):
            d = sorted(c[k + 1] - c[k] for c in calls)
            name = '%s %s -> %s %s' % (steps[k][0], steps[k][1].split('_')[-1], steps[k + 1][0], steps[k + 1][1].split('_')[-1])
            print('  %-34s median %6.1f  mean %6.1f  p90 %6.1f' % (name, st.median(d), st.mean(d), d[int(len(d) * .9)]))
        if label == 'relayed':
            tids = {tid for t, pid, tid, e, rest in events if pid == relay}
            sw = sum(1 for t, pid, tid, e, rest in events if e == 'sched:sched_switch'
                     and re.search(r'next_pid=(\d+)', rest).group(1) in tids)
            fx = sum(1 for t, pid, tid, e, rest in events if pid == relay and e == 'syscalls:sys_enter_futex')
            ns = sum(1 for t, pid, tid, e, rest in events if pid == relay and e == 'syscalls:sys_enter_nanosleep')
            n = len(calls)
            print('  relay process, per relayed call: switch-ins %.2f, futex %.2f, nanosleep %.2f' % (sw / n, fx / n, ns / n))


if __name__ == '__main__':
    main()
