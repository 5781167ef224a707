// SPDX-License-Identifier: MIT
/*
 * cxx_target - ground truth for demangling: the CPU burns in a function
 * of a namespace, in a member of a class template instantiated for two
 * types, and in a lambda, each a real frame (noinline), so that a report
 * shows their C++ names demangled (and mangled with --no-demangle).
 *
 *   cxx_target [SECONDS]   (default 1; exits 0)
 *
 * SECONDS is CPU time (the thread's CPU clock), not wall time, so that a
 * recording holds about 999 samples a second of it however loaded the
 * machine is; a loaded machine only takes longer.
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>

#define STEP __attribute__((noinline, noclone))
/*
 * Iterations per call: some 10 ms, far longer than a sampling period, so
 * that samples cannot keep in step with the rounds and favour one function.
 */
#define ROUND 4000000ul

namespace prof_test {
namespace shapes {

STEP unsigned long spin(unsigned long x)
{
	volatile unsigned long acc = x;

	for (unsigned long i = 0; i < ROUND; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

template <typename T> struct Accumulator {
	T state;

	STEP T churn(unsigned long n)
	{
		volatile T acc = state;

		for (unsigned long i = 0; i < n; i++)
			acc = acc * 3 + 1;
		state = acc;
		return acc;
	}
};

} // namespace shapes
} // namespace prof_test

/* The thread's CPU time: what SECONDS counts. */
static double cpu_now()
{
	timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? std::strtod(argv[1], nullptr) : 1.0, end = cpu_now() + seconds;
	prof_test::shapes::Accumulator<unsigned long> wide = { 1 };
	prof_test::shapes::Accumulator<unsigned int> narrow = { 2 };
	auto burn = [](unsigned long x) __attribute__((noinline, noclone)) {
		volatile unsigned long acc = x;

		for (unsigned long i = 0; i < ROUND; i++)
			acc = acc * 2862933555777941757ul + 3037000493ul;
		return (unsigned long)acc;
	};
	unsigned long sum = 0, n = 0;

	do {
		sum += prof_test::shapes::spin(n);
		sum += wide.churn(ROUND);
		sum += narrow.churn(ROUND);
		sum += burn(n++);
	} while (cpu_now() < end);
	std::printf("cxx_target: %lu rounds, checksum %lx\n", n, sum & 0xfff);
	return 0;
}
