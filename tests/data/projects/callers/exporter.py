class Exporter:
    def __init__(self, layer):
        # train.py passes a layer whose bias is a parameter
        self.bias = layer.bias.numpy()  # NPT001
        self.mean = layer.running_mean.numpy()  # ok: a buffer
