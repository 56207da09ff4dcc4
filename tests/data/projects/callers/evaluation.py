import numpy as np
import torch


def evaluate(model, loader):
    predictions = []
    for x, _ in loader:
        # train.py passes a model with parameters, moved
        predictions.append(model(x).numpy())  # NPT001, NPT002
    return predictions


def evaluate_quietly(model, loader):
    with torch.no_grad():
        return [model(x).cpu().numpy() for x, _ in loader]  # ok: no grad, moved back


def im2tensor(image):
    # train.py passes a float64 image
    return torch.FloatTensor(image)  # NPT009


def to_numpy(tensor):
    return tensor.detach().cpu().numpy() if tensor.requires_grad else tensor.cpu().numpy()  # ok: guarded


def nan_count(scores):
    # train.py passes a tensor on the device
    return int(np.isnan(scores).sum())  # NPT002


def scores_at(loader, mode):
    def hits(predicted, truth):
        # a helper defined in the body: what it finds is this module's code too
        return np.logical_and(predicted, truth)  # NPT002

    return [hits(model_out, truth) for model_out, truth in loader]
