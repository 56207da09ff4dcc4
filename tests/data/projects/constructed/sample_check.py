from pkg.buffers import ReplayBuffer

params = dict(size=10)
buffer = ReplayBuffer(**params)  # the default device, "auto": CUDA where it is available
batch = buffer.sample(batch_size=4)
batch.rewards.numpy()  # NPT002
on_cpu = ReplayBuffer(10, device="cpu")
on_cpu.sample(4).rewards.numpy()  # ok: this buffer was made on the CPU
on_cpu.sample(4).observations.numpy()  # ok: so are all its samples
