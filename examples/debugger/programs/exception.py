"""An uncaught exception: the debugger stops where it is raised."""


def parse(text):
    return int(text)


values = ["1", "2", "three"]
print(sum(parse(v) for v in values))
