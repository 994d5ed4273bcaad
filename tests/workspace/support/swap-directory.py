"""Swaps directories inside a workspace between real directories and symbolic links to an outside directory.

Usage: swap-directory.py <outside directory> <directory> [<directory> ...]
Prints "ready" before the first swap, "swaps N" after every 100 swaps, and "swaps N" once more when it stops, which it
does when its standard input closes: the test decides how long the race lasts by what happened, never by the clock.
Every error is ignored: the code under test creates, renames and removes things in the same directories at the same
time.
"""
import os, sys, threading

outside, targets = sys.argv[1], sys.argv[2:]
stop = threading.Event()


def wait_for_eof():
    sys.stdin.read()
    stop.set()


threading.Thread(target=wait_for_eof, daemon=True).start()
swaps = 0
print('ready', flush=True)
while not stop.is_set():
    for target in targets:
        parked = f'{target}.parked-{swaps}'
        # Real directory -> link: park whatever directory is there and put the link in its place.
        try:
            os.rename(target, parked)
        except OSError:
            pass
        try:
            os.symlink(outside, target)
        except OSError:
            pass
        # Link -> real directory: remove the link and bring the parked directory back (or a new one).
        try:
            os.unlink(target)
        except OSError:
            pass
        try:
            os.rename(parked, target)
        except OSError:
            try:
                os.mkdir(target)
            except OSError:
                pass
    swaps += 1
    if swaps % 100 == 0:
        print('swaps', swaps, flush=True)
for target in targets:
    try:
        os.unlink(target)
    except OSError:
        pass
print('swaps', swaps, flush=True)
