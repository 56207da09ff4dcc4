from a import make


def helper():
    return make()


def loop():
    return helper()
