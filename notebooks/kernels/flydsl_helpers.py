"""Device helpers shared by FlyDSL kernels, reached as ``flydsl_helpers.<name>``
(as upstream's paged attention reaches ``dpp_utils`` and ``pa_common``)."""

import flydsl.compiler as flyc


@flyc.jit
def scale(x):
    return x * 2.0
