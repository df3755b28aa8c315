"""``cache_info()``: one record for every cache flyrt keeps in memory, a
launcher's compiled artifacts, a FlyDSL JitFunction's (flydsl_adapter) and a
compile factory's entries (``flyc.compile_cache``)."""

from collections import namedtuple

from .tables import html_table


class CacheInfo(namedtuple("CacheInfo", "hits misses compiles evictions size maxsize", defaults=(None,))):
    """Calls served from the cache (hits), calls that were not (misses),
    compiles (a factory's: calls of the factory), entries dropped as stale
    or to make room (evictions), entries held (size) and the most it holds
    (maxsize; None: no bound). ``currsize`` is ``size``, as
    ``functools.lru_cache``'s record names it, for factories that replace one."""

    __slots__ = ()

    @property
    def currsize(self):
        return self.size

    def _repr_html_(self):
        return html_table(self._fields, [self])
