"""From a Python function to a trace: the AST rewrite of control flow, the
functions made traceable, and ``@flyc.kernel``."""
