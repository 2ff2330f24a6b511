"""A deep recursion: the stack and nested data are limited in answers."""


def nest(depth):
    if depth == 0:
        data = {"levels": [list(range(50)) for _ in range(40)], "name": "bottom"}
        return len(data)  # stop here: 500 frames deep
    return nest(depth - 1)


nest(500)
print("done")
