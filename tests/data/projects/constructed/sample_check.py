from pkg.buffers import NStepReplayBuffer, ReplayBuffer

params = dict(size=10)
buffer = ReplayBuffer(**params)  # the default device, "auto": CUDA where it is available
batch = buffer.sample(batch_size=4)
batch.rewards.numpy()  # NPT002
on_cpu = ReplayBuffer(10, device="cpu")
on_cpu.sample(4).rewards.numpy()  # ok: this buffer was made on the CPU
on_cpu.sample(4).observations.numpy()  # ok: so are all its samples
n_step = NStepReplayBuffer(10, n_steps=2, device="cpu")
n_step.sample(4).rewards.numpy()  # ok: the keyword reached ReplayBuffer.__init__ through **kwargs
NStepReplayBuffer(10).sample(4).rewards.numpy()  # NPT002
