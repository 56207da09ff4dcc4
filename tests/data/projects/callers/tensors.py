def to_host(*modules):
    return [module.to("cpu") for module in modules]


def host_copy(tensor):
    return tensor.numpy()  # NPT002
