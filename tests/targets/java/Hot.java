// Hot.java - a hot leaf under two callers, for the JVM tests: main calls
// viaA and viaB in turn, each of which calls fib, for SECONDS of the
// process's own CPU time (so that a busy machine stretches the run rather
// than shrinking the samples).  fib recurses, so the JIT keeps it a method
// of its own even where it inlines its callers.  "Hot SECONDS late" calls
// viaC instead from the run's second half on: code first compiled late in
// a run, after the first perf maps were written.
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class Hot {
	static long fib(int n) {
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}

	static long viaA(int n) {
		return fib(n) + 1;
	}

	static long viaB(int n) {
		return fib(n) + 2;
	}

	static long viaC(int n) {
		return fib(n) + 3;
	}

	public static void main(String[] args) {
		double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2.0;
		ThreadMXBean mx = ManagementFactory.getThreadMXBean();
		boolean late = args.length > 1 && args[1].equals("late");
		long limit = (long)(seconds * 1e9), total = 0, calls = 0, now;

		while ((now = mx.getCurrentThreadCpuTime()) < limit) {
			if (late && now >= limit / 2)
				total += viaC(22);
			else
				total += (calls & 1) == 0 ? viaA(22) : viaB(22);
			calls++;
		}
		System.out.println("hot: " + calls + " calls, " + total);
	}
}
