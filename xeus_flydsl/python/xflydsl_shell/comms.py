"""Comms for the ``comm`` package (and so ipywidgets) over xeus's comm manager.

Every Python comm is backed by a C++ ``xeus::xcomm`` (``native.Comm``), so
xeus routes the client's ``comm_msg`` / ``comm_close`` to it; targets that
Python registers become xeus targets, so a client's ``comm_open`` reaches them.
"""

import comm
from comm.base_comm import BaseComm, CommManager


class KernelComm(BaseComm):
    """A comm whose messages travel through a native xeus comm."""

    def __init__(self, *args, native, native_comm=None, **kwargs):
        self._native = native
        self._native_comm = native_comm
        super().__init__(*args, **kwargs)
        if self._native_comm is not None:
            self._attach_handlers()

    def _attach_handlers(self):
        self._native_comm.on_message(self.handle_msg)
        self._native_comm.on_close(self._closed_by_peer)

    def _closed_by_peer(self, msg):
        self.handle_close(msg)
        self._closed = True
        manager = comm.get_comm_manager()
        manager.unregister_comm(self)
        self._native_comm = None

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        data = {} if data is None else data
        metadata = {} if metadata is None else metadata
        buffers = [bytes(b) for b in buffers] if buffers else []
        if msg_type == "comm_open":
            self._native_comm = self._native.Comm(self.target_name, self.comm_id)
            self._attach_handlers()
            self._native_comm.open(data, metadata, buffers)
        elif self._native_comm is None:
            return  # already closed: nothing to tell the client
        elif msg_type == "comm_msg":
            self._native_comm.send(data, metadata, buffers)
        elif msg_type == "comm_close":
            self._native_comm.close(data, metadata, buffers)
            self._native_comm = None
        else:
            raise ValueError(f"unknown comm message type {msg_type!r}")


class KernelCommManager(CommManager):
    """``comm``'s manager whose targets are also xeus targets."""

    def __init__(self, native):
        super().__init__()
        self._native = native

    def register_target(self, target_name, f):
        super().register_target(target_name, f)

        def opened_by_client(native_comm, msg):
            content = msg["content"]
            kernel_comm = KernelComm(
                comm_id=content["comm_id"],
                primary=False,
                target_name=target_name,
                native=self._native,
                native_comm=native_comm,
            )
            self.register_comm(kernel_comm)
            callback = self.targets.get(target_name)
            if callback is not None:
                callback(kernel_comm, msg)

        self._native.register_comm_target(target_name, opened_by_client)

    def unregister_target(self, target_name, f):
        self._native.unregister_comm_target(target_name)
        return super().unregister_target(target_name, f)


def install(native):
    """Make ``comm.create_comm`` and ``comm.get_comm_manager`` use the kernel."""
    manager = KernelCommManager(native)
    comm.create_comm = lambda *args, **kwargs: KernelComm(*args, native=native, **kwargs)
    comm.get_comm_manager = lambda: manager
    return manager
