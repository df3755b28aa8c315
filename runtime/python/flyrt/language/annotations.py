"""What a parameter's annotation says it is: ``fx.Tensor``, ``fx.Constexpr[T]``
(compiled in) or ``fx.Stream``; scalar parameters are annotated with their
dtype (core.dtypes)."""


class Tensor:
    """Annotation of a tensor parameter (numpy arrays; torch tensors via DLPack)."""


class _ConstexprOf:
    def __init__(self, python_type):
        self.python_type = python_type

    def __repr__(self):
        return f"fx.Constexpr[{getattr(self.python_type, '__name__', self.python_type)}]"


class Constexpr:
    """``fx.Constexpr[int]``: a parameter whose value is compiled in."""

    def __class_getitem__(cls, python_type):
        return _ConstexprOf(python_type)


def is_constexpr(annotation):
    return annotation is Constexpr or isinstance(annotation, _ConstexprOf)


class Stream:
    """A GPU stream argument; launches on the CPU are synchronous."""

    def __init__(self, handle=None):
        self.handle = handle

    def __repr__(self):
        return f"fx.Stream({self.handle!r})"
