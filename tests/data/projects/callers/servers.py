import numpy as np


class Server:
    # federated.py derives from it and sets its clients: the methods it inherits read them on its objects
    def __init__(self):
        self.rounds = 0

    def evaluate(self):
        return np.sum([client.test() for client in self.clients])  # NPT001

    def evaluate_detached(self):
        return np.sum([client.test().detach() for client in self.clients])  # ok: detached first
