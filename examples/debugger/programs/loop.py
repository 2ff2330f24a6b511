"""A loop calling a small function: breakpoints, conditions, steps."""


def add(total, n):
    result = total + n
    return result


def main():
    total = 0
    for n in range(10):
        total = add(total, n)
    print("total", total)


main()
