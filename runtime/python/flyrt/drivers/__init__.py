"""Per-device drivers: how a tensor of that device reaches a launcher, what
the device's architecture is, which stream launches run on. The C++
dispatcher reads numpy arrays and torch CUDA tensors itself; these handle
everything else, once per call."""
