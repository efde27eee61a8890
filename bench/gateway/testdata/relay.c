/*
 * relay.c: BenchmarkGatewayFloor's C relay. It starts the command after
 * "--" and copies bytes both ways with one thread per direction, each
 * blocked in read(2): the least a process between a client and a stdio
 * server can cost, with no language runtime's scheduler in the way. The
 * benchmark builds it with the system's C compiler when there is one
 * (cc -O2 -pthread); it is not part of bulwark.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int child_in, child_out;

static int copy_all(int from, int to) {
	static __thread char buf[1 << 16];
	for (;;) {
		ssize_t n = read(from, buf, sizeof buf);
		if (n <= 0)
			return 0;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(to, buf + off, (size_t)(n - off));
			if (w <= 0)
				return 0;
			off += w;
		}
	}
}

static void *down(void *arg) {
	(void)arg;
	copy_all(child_out, 1);
	exit(0);
}

int main(int argc, char **argv) {
	int i = 1;
	while (i < argc && strcmp(argv[i], "--") != 0)
		i++;
	if (i + 1 >= argc)
		return 2;
	int in[2], out[2];
	if (pipe(in) != 0 || pipe(out) != 0)
		return 1;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		execv(argv[i + 1], argv + i + 1);
		_exit(127);
	}
	close(in[0]), close(out[1]);
	child_in = in[1];
	child_out = out[0];
	pthread_t t;
	if (pthread_create(&t, NULL, down, NULL) != 0)
		return 1;
	copy_all(0, child_in);
	close(child_in);
	waitpid(pid, NULL, 0);
	return 0;
}
