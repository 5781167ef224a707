/* SPDX-License-Identifier: MIT */
/*
 * waiter - ground truth for off-CPU time: threads that sleep, block on a
 * pipe, contend on a mutex and compute, for SECONDS of wall time (default
 * 2), each phase timed by the thread itself in wall time (CLOCK_MONOTONIC)
 * and CPU time (its thread CPU clock), so that wall - CPU is the time the
 * phase spent off its CPU.  At the end it prints, per phase function,
 *
 *   phase FUNCTION WALL_NS CPU_NS
 *
 * summed over the threads that ran it, then per thread (the main thread is
 * "waiter") its tid and the time it lived, from its first instruction to
 * its last (CLOCK_MONOTONIC, by the thread itself):
 *
 *   thread NAME TID LIFETIME_NS
 *
 * (A thread is "waiter" until it names itself, and a profile may see it
 * under both names: its tid says which thread it is.)
 *
 * Every function below is a frame of its own (noinline), so a profile names
 * them:
 *
 *   "sleeper":  start_thread -> sleeper_main -> sleep_phase -> nanosleep
 *   "reader":   start_thread -> reader_main -> pipe_phase -> read
 *   "writer":   start_thread -> writer_main -> write_phase (sleeps, then writes)
 *   "locker1/2": start_thread -> locker_main -> lock_phase -> pthread_mutex_lock,
 *               then -> hold_phase (computes holding the lock)
 *   "computer": start_thread -> computer_main -> compute_phase
 *   main:       main -> join_phase -> pthread_join
 *
 * The lockers and the computer want more CPU than two cores give while a
 * lock is held: some of their time is runnable, waiting for a CPU.
 *
 *   waiter [SECONDS]   (exits 0)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STEP __attribute__((noinline, noclone, no_icf))
/* After a call: no tail call, so that the caller stays on the stack. */
#define NO_TAIL_CALL() __asm__ volatile("" ::: "memory")

enum phase { SLEEP, PIPE, WRITE, LOCK, HOLD, COMPUTE, JOIN, NPHASES };

static const char *const phase_names[NPHASES] = {
	"sleep_phase", "pipe_phase", "write_phase", "lock_phase", "hold_phase",
	"compute_phase", "join_phase",
};

static double seconds = 2.0;
static uint64_t end_ns;
static int pipefd[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t totals_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t wall_total[NPHASES], cpu_total[NPHASES];

/* A thread of waiter: its name, and the time it lived by its own clock. */
struct worker {
	const char *name;
	pid_t tid;
	uint64_t start_ns, lifetime_ns;
};

static uint64_t now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A phase's clocks while it runs, added to its totals when it ends. */
struct timing {
	uint64_t wall[NPHASES], cpu[NPHASES];
	uint64_t w0, c0;
};

static void begin(struct timing *t)
{
	t->w0 = now(CLOCK_MONOTONIC);
	t->c0 = now(CLOCK_THREAD_CPUTIME_ID);
}

static void end(struct timing *t, enum phase p)
{
	t->wall[p] += now(CLOCK_MONOTONIC) - t->w0;
	t->cpu[p] += now(CLOCK_THREAD_CPUTIME_ID) - t->c0;
}

static void add_totals(const struct timing *t)
{
	int i;

	pthread_mutex_lock(&totals_lock);
	for (i = 0; i < NPHASES; i++) {
		wall_total[i] += t->wall[i];
		cpu_total[i] += t->cpu[i];
	}
	pthread_mutex_unlock(&totals_lock);
}

static STEP void burn(uint64_t ns)
{
	uint64_t until = now(CLOCK_THREAD_CPUTIME_ID) + ns;
	volatile uint64_t acc = 1;

	while (now(CLOCK_THREAD_CPUTIME_ID) < until) {
		int i;

		for (i = 0; i < 20000; i++)
			acc = acc * 6364136223846793005u + 1;
	}
}

static STEP void sleep_phase(void)
{
	struct timespec ts = { 0, 10 * 1000000 };

	nanosleep(&ts, NULL);
	NO_TAIL_CALL();
}

static STEP void pipe_phase(void)
{
	char c;

	if (read(pipefd[0], &c, 1) < 0)
		abort();
	NO_TAIL_CALL();
}

static STEP void write_phase(void)
{
	struct timespec ts = { 0, 15 * 1000000 };

	nanosleep(&ts, NULL);
	if (write(pipefd[1], "x", 1) != 1)
		abort();
	NO_TAIL_CALL();
}

static STEP void lock_phase(void)
{
	pthread_mutex_lock(&lock);
	NO_TAIL_CALL();
}

static STEP void hold_phase(void)
{
	burn(4 * 1000000);
	pthread_mutex_unlock(&lock);
	NO_TAIL_CALL();
}

static STEP void compute_phase(void)
{
	burn(5 * 1000000);
	NO_TAIL_CALL();
}

static STEP void *sleeper_main(void *arg)
{
	struct worker *w = arg;
	struct timing t = { 0 };

	w->start_ns = now(CLOCK_MONOTONIC);
	w->tid = gettid();
	pthread_setname_np(pthread_self(), w->name);
	while (now(CLOCK_MONOTONIC) < end_ns) {
		begin(&t);
		sleep_phase();
		end(&t, SLEEP);
	}
	add_totals(&t);
	w->lifetime_ns = now(CLOCK_MONOTONIC) - w->start_ns;
	return NULL;
}

static STEP void *reader_main(void *arg)
{
	struct worker *w = arg;
	struct timing t = { 0 };

	w->start_ns = now(CLOCK_MONOTONIC);
	w->tid = gettid();
	pthread_setname_np(pthread_self(), w->name);
	for (;;) {
		begin(&t);
		pipe_phase();
		end(&t, PIPE);
		if (now(CLOCK_MONOTONIC) >= end_ns)
			break;
	}
	add_totals(&t);
	w->lifetime_ns = now(CLOCK_MONOTONIC) - w->start_ns;
	return NULL;
}

static STEP void *writer_main(void *arg)
{
	struct worker *w = arg;
	struct timing t = { 0 };

	w->start_ns = now(CLOCK_MONOTONIC);
	w->tid = gettid();
	pthread_setname_np(pthread_self(), w->name);
	while (now(CLOCK_MONOTONIC) < end_ns) {
		begin(&t);
		write_phase();
		end(&t, WRITE);
	}
	/* the reader's last read: it sees the end and stops */
	if (write(pipefd[1], "x", 1) != 1)
		abort();
	add_totals(&t);
	w->lifetime_ns = now(CLOCK_MONOTONIC) - w->start_ns;
	return NULL;
}

static STEP void *locker_main(void *arg)
{
	struct worker *w = arg;
	struct timing t = { 0 };

	w->start_ns = now(CLOCK_MONOTONIC);
	w->tid = gettid();
	pthread_setname_np(pthread_self(), w->name);
	while (now(CLOCK_MONOTONIC) < end_ns) {
		begin(&t);
		lock_phase();
		end(&t, LOCK);
		begin(&t);
		hold_phase();
		end(&t, HOLD);
	}
	add_totals(&t);
	w->lifetime_ns = now(CLOCK_MONOTONIC) - w->start_ns;
	return NULL;
}

static STEP void *computer_main(void *arg)
{
	struct worker *w = arg;
	struct timing t = { 0 };

	w->start_ns = now(CLOCK_MONOTONIC);
	w->tid = gettid();
	pthread_setname_np(pthread_self(), w->name);
	while (now(CLOCK_MONOTONIC) < end_ns) {
		begin(&t);
		compute_phase();
		end(&t, COMPUTE);
	}
	add_totals(&t);
	w->lifetime_ns = now(CLOCK_MONOTONIC) - w->start_ns;
	return NULL;
}

static STEP void join_phase(pthread_t *th, int n)
{
	int i;

	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	NO_TAIL_CALL();
}

int main(int argc, char **argv)
{
	void *(*fns[])(void *) = { sleeper_main, reader_main, writer_main, locker_main,
				   locker_main, computer_main };
	struct worker workers[] = { { "sleeper" }, { "reader" }, { "writer" }, { "locker1" },
				    { "locker2" }, { "computer" }, { "waiter" } };
	pthread_t th[6];
	struct timing t = { 0 };
	int i;

	workers[6].start_ns = now(CLOCK_MONOTONIC);
	workers[6].tid = gettid();

	if (argc > 1)
		seconds = atof(argv[1]);
	if (!(seconds > 0)) {
		fprintf(stderr, "usage: waiter [SECONDS]\n");
		return 64;
	}
	if (pipe(pipefd) < 0)
		return 1;
	end_ns = now(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9);
	for (i = 0; i < 6; i++)
		if (pthread_create(&th[i], NULL, fns[i], &workers[i]))
			return 1;
	begin(&t);
	join_phase(th, 6);
	end(&t, JOIN);
	add_totals(&t);
	for (i = 0; i < NPHASES; i++)
		printf("phase %s %llu %llu\n", phase_names[i], (unsigned long long)wall_total[i],
		       (unsigned long long)cpu_total[i]);
	workers[6].lifetime_ns = now(CLOCK_MONOTONIC) - workers[6].start_ns;
	for (i = 0; i < 7; i++)
		printf("thread %s %d %llu\n", workers[i].name, (int)workers[i].tid,
		       (unsigned long long)workers[i].lifetime_ns);
	fflush(stdout);
	return 0;
}
