# threads.py - Python frames with known callers, for the Python tests.
#
#   python3 threads.py hot SECONDS     main and two threads: foo -> bar -> baz,
#                                      baz a hot loop, SECONDS of each one's CPU
#   python3 threads.py tiny SECONDS    main: loop -> tiny, a short call in a loop
#   python3 threads.py wait SECONDS    main: waiter -> sleeper, off its CPU
#
# Each thread counts its own CPU time (time.thread_time), so a busy machine
# stretches the run rather than thinning the samples.  The threads wait for
# each other before they exit: the recorder reads a sample's Python frames
# a moment after the sample, and a thread that has exited has freed them.
import sys
import threading
import time


def baz(end):
    n = 0
    while True:
        for _ in range(2000):
            n += 1
        if time.thread_time() >= end:
            return n


def bar(end):
    return baz(end)


def foo(end):
    return bar(end)


def tiny():
    return 1


def loop(end):
    n = 0
    while True:
        for _ in range(1000):
            n += tiny()
        if time.thread_time() >= end:
            return n


def sleeper(secs):
    time.sleep(secs)


def waiter(secs):
    sleeper(secs)


def hot(secs, done):
    foo(time.thread_time() + secs)
    done.wait()
    time.sleep(0.3)


def main():
    what, secs = sys.argv[1], float(sys.argv[2])
    if what == "hot":
        done = threading.Barrier(3)
        ts = [threading.Thread(target=hot, args=(secs, done)) for _ in range(2)]
        for t in ts:
            t.start()
        hot(secs, done)
        for t in ts:
            t.join()
    elif what == "tiny":
        loop(time.thread_time() + secs)
        time.sleep(0.3)
    elif what == "wait":
        waiter(secs)
    print("python:", what, "done")


main()
