"""A program that never stops by itself: wait, pause, stop."""
import time

ticks = 0
while True:
    ticks += 1
    time.sleep(0.01)
