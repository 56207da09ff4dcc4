from replay import ReplayBuffer

buffer = ReplayBuffer(10)
buffer.sample([0, 1]).numpy()  # NPT002
buffer.sample([0, 1]).cpu().numpy()  # ok: moved first
