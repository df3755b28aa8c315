"""``flyc.Config``: one setting of an autotuned launcher's parameters."""


class Config:
    """Keyword arguments the launcher is called with (`kwargs`: usually its
    Constexpr parameters), and, as Triton's Config has them, `num_warps` and
    `num_stages`, passed as parameters of those names when set (the launcher
    must have them). `pre_hook(named_args)` runs before each call with it."""

    def __init__(self, kwargs, num_warps=None, num_stages=None, pre_hook=None):
        self.kwargs = dict(kwargs)
        self.num_warps, self.num_stages, self.pre_hook = num_warps, num_stages, pre_hook
        self.arguments = self.all_kwargs()  # what each call passes: made once, not per call

    def all_kwargs(self):
        """Every argument this config passes to the launcher."""
        extra = {name: value for name, value in (("num_warps", self.num_warps), ("num_stages", self.num_stages))
                 if value is not None}
        return {**self.kwargs, **extra}

    def describe(self):
        """The config as messages and tables show it: ``BLOCK=64, num_warps=4``."""
        return ", ".join(f"{name}={value!r}" for name, value in self.all_kwargs().items()) or "(no arguments)"

    def __repr__(self):
        return f"Config({self.describe()})"

    def __eq__(self, other):
        return isinstance(other, Config) and self.all_kwargs() == other.all_kwargs()

    def __hash__(self):
        return hash(repr(sorted(self.all_kwargs().items())))
