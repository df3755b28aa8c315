"""The ports of the kernels a pytest worker starts: a slice of its own, below
the range the OS hands out as ephemeral ports.

jupyter_client picks a kernel's five ports by binding port 0 and closing the
socket; the kernel binds them later. In between, the same port can go to
another worker's kernel, which picked it the same way, or to the local end of
any outgoing connection (the OS takes those from the same range), and the
kernel dies at start ("Address already in use"; the client reports "Kernel
died before replying to kernel_info"). Worker k of n takes its ports from the
k-th of n slices of [FIRST_PORT, the ephemeral range's start), each checked
free by a bind: no other worker of the run and no outgoing connection takes
them.
"""

import random
import socket

FIRST_PORT = 10000  # ports below are well-known services' homes
KERNEL_PORTS = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")


def ephemeral_start():
    """Where the OS's ephemeral ports begin: Linux's ip_local_port_range,
    else IANA's 49152."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 49152


def worker_slice(worker_index, workers):
    """range(first, end) of worker `worker_index` of `workers`; None where
    the ports below the ephemeral range are too few to share out."""
    span = (ephemeral_start() - FIRST_PORT) // workers
    if span < 4 * len(KERNEL_PORTS):
        return None
    first = FIRST_PORT + worker_index * span
    return range(first, first + span)


class WorkerPorts:
    """Hands out free ports of one slice for one kernel at a time, going
    round the slice from a random place (two runs on one host start apart)."""

    def __init__(self, ports, ip="127.0.0.1"):
        self.ports = ports
        self.ip = ip
        self._next = random.randrange(len(ports))

    def take(self):
        """{"shell_port": ..., ...}: five ports that are free now."""
        found = []
        for _ in range(len(self.ports)):
            port = self.ports[self._next]
            self._next = (self._next + 1) % len(self.ports)
            if _free(self.ip, port):
                found.append(port)
                if len(found) == len(KERNEL_PORTS):
                    return dict(zip(KERNEL_PORTS, found))
        raise OSError(f"fewer than {len(KERNEL_PORTS)} free ports on {self.ip} in "
                      f"{self.ports.start}..{self.ports.stop - 1}, this worker's share")


def _free(ip, port):
    with socket.socket() as probe:
        try:
            probe.bind((ip, port))
        except OSError:
            return False
    return True
