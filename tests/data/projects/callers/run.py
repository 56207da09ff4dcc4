from fit import Net, fit

# neither "torch" nor "numpy" here: what this call passes is still what fit.py's body is read with
if __name__ == "__main__":
    fit(Net(), [], warmup=2)
