from tensors import *  # noqa: F403 (re-exported: callers read the bodies where they are defined)
