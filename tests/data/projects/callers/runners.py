"""Runner classes and a factory that picks one for a task (mvts_transformer's pipeline_factory)."""


class ImputationRunner:
    def __init__(self, model):
        self.model = model

    def evaluate(self, x):
        return self.model(x).numpy()  # NPT001


class RegressionRunner(ImputationRunner):
    def evaluate(self, x):
        return self.model(x).detach().numpy()  # ok: detached


def pipeline_for(task):
    if task == "imputation":
        return "masked", ImputationRunner
    return "plain", RegressionRunner
