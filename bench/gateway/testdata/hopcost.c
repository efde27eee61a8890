// hopcost: what the machine charges for the steps a relayed stdio call is
// made of, before any program does any work — a system call, a read that
// finds nothing, a 1-byte write and read on one pipe, and a round trip
// between two processes over two pipes with both on one processor and
// with each on its own. docs/performance.md ("bulwark gateway", session 11)
// quotes it; build and run with
//
//	cc -O2 -o /tmp/hopcost bench/gateway/testdata/hopcost.c && /tmp/hopcost
//
// Linux only (sched_setaffinity); needs two processors for the last line.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void pin(int cpu) {
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof s, &s) != 0) {
		perror("sched_setaffinity");
		exit(1);
	}
}

// pingpong times n round trips of one byte between this process, pinned to
// processor 0, and a child pinned to processor cpu.
static double pingpong(int cpu, int n) {
	int a[2], b[2];
	char c = 'x';
	if (pipe(a) != 0 || pipe(b) != 0) {
		perror("pipe");
		exit(1);
	}
	pid_t pid = fork();
	if (pid == 0) {
		pin(cpu);
		for (int i = 0; i < n; i++) {
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	pin(0);
	double t0 = now_us();
	for (int i = 0; i < n; i++) {
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1) {
			perror("pingpong");
			exit(1);
		}
	}
	double t = (now_us() - t0) / n;
	waitpid(pid, NULL, 0);
	close(a[0]), close(a[1]), close(b[0]), close(b[1]);
	return t;
}

int main(void) {
	int n = 200000;
	char buf[64];
	double t0 = now_us();
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
	printf("system call (getppid)             %7.2f us\n", (now_us() - t0) / n);

	int p[2];
	if (pipe(p) != 0) {
		perror("pipe");
		return 1;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	t0 = now_us();
	for (int i = 0; i < n; i++)
		if (read(p[0], buf, sizeof buf) != -1)
			return 1;
	printf("read of an empty pipe (EAGAIN)    %7.2f us\n", (now_us() - t0) / n);
	t0 = now_us();
	for (int i = 0; i < n; i++)
		if (write(p[1], buf, 1) != 1 || read(p[0], buf, sizeof buf) != 1)
			return 1;
	printf("1-byte write and read, one pipe   %7.2f us\n", (now_us() - t0) / n);

	printf("round trip, one processor         %7.2f us\n", pingpong(0, 100000));
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		printf("round trip, two processors        %7.2f us\n", pingpong(1, 100000));
	return 0;
}
