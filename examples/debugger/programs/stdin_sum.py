"""Reads whole numbers from standard input, one per line, and prints their sum."""
import sys

total = 0
for line in sys.stdin:
    total += int(line)
print("sum", total)
