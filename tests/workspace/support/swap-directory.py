"""Swaps directories inside a workspace between real directories and symbolic links to an outside directory.

Usage: swap-directory.py <outside directory> <seconds> <directory> [<directory> ...]
Prints "ready" before the first swap and "swaps N" when it stops. Every error is ignored: the code under test creates,
renames and removes things in the same directories at the same time.
"""
import os, sys, time

outside, seconds, targets = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
end = time.monotonic() + seconds
swaps = 0
print('ready', flush=True)
while time.monotonic() < end:
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
for target in targets:
    try:
        os.unlink(target)
    except OSError:
        pass
print('swaps', swaps, flush=True)
