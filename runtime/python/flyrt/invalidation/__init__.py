"""The invalidation engine: what each compiled artifact read while it traced
(dependencies), compile factories, the registry of live launchers that the
kernel sweeps after every cell, and manifests for other processes. It
observes and evicts; it never reaches into the front end or codegen."""
