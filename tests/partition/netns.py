"""A network of its own for a test: a bridge, one network namespace per service, and
packet-dropping cuts between chosen groups of them.

    with Network() as net:
        a, b = net.add("table0"), net.add("redis")
        subprocess.Popen([*a.exec_prefix, "redis-cli", ...])
        cut = net.cut([a], [b])   # every packet between the two groups dropped, both ways
        net.heal(cut)             # (or net.heal(): every cut)

The shape is a node's pod network (docs/partitions.md):

- a *hub* namespace holds a Linux bridge (the node's switch), and nothing else;
- each node gets a namespace of its own with its loopback up and one veth pair: ``eth0``
  inside, with its own address in a /24 picked for this network (``10.77.N.0/24``), the
  other end a port of the bridge;
- this process's own namespace (the test's players, the checks) is on the bridge too,
  as ``.1`` (``Network.host``), through one more veth pair: so the clients can be cut
  from a gateway as a player's network can.

A cut is a pair of sets of addresses, and drops happen on the bridge, in the hub
namespace's own ``nft`` table of the ``bridge`` family (its ``forward`` hook sees every
frame from one port to another; no ``br_netfilter``, nothing in the root namespace's
firewall, where podman's rules live): a frame whose IPv4 source and destination are
an (a, b) or (b, a) pair of a cut is dropped silently, as a dead link drops it, so a
sender sees no error, only silence, and retransmits until its own timeouts. Cuts may
overlap: a pair stays dropped while any cut holds it.

Names are unique per network (``rkm-<6 hex>-…``), and each network takes a /24 no other
address of this machine is in, under a lock, so test runs in parallel cannot collide.
``close`` (``with`` exits) kills what still runs in its namespaces, deletes them (the
bridge, the veths and the nft table go with them) and the host's veth; a network whose
process died without closing is swept by the next one that starts.

Needs root (``ip netns``, ``nft``), iproute2 and nftables (scripts/setup installs them).
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import os
import re
import secrets
import shutil
import signal
import subprocess
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Cut", "Network", "Node", "available"]

STATE = Path("/run/rackem-netns")  # one file a live network: its owner's pid
LOCK = Path("/run/lock/rackem-netns.lock")
SUBNETS = range(0, 250)  # 10.77.N.0/24
NFT_TABLE = "rackem_cut"


def available() -> str | None:
    """Why networks cannot be made here (not root, a tool missing), or None: they can."""
    if os.geteuid() != 0:
        return "needs root (ip netns, nft)"
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (scripts/setup: iproute2, nftables)"
    return None


def _run(*argv: str, input: str | None = None, check: bool = True) -> str:
    done = subprocess.run(
        argv, input=input, capture_output=True, text=True, timeout=30, check=False
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip() or done.returncode}")
    return done.stdout


@dataclass(frozen=True)
class Node:
    """One host on the network: a namespace of its own (``ns``), or this process's (None)."""

    name: str
    addr: str
    ns: str | None

    @property
    def exec_prefix(self) -> list[str]:
        """What to put before a command to run it in this node's namespace."""
        return [] if self.ns is None else ["ip", "netns", "exec", self.ns]


@dataclass(frozen=True)
class Cut:
    """The address pairs one ``Network.cut`` dropped (each both ways)."""

    a: tuple[str, ...]
    b: tuple[str, ...]

    def pairs(self) -> Iterator[tuple[str, str]]:
        for x in self.a:
            for y in self.b:
                if x != y:
                    yield x, y
                    yield y, x


@dataclass
class Network:
    tag: str = field(default_factory=lambda: secrets.token_hex(3))
    nodes: dict[str, Node] = field(default_factory=dict)
    subnet: int = -1
    _dropped: Counter[tuple[str, str]] = field(default_factory=Counter)
    _cuts: list[Cut] = field(default_factory=list)
    _up: bool = False

    # -- names ------------------------------------------------------------------------

    @property
    def hub(self) -> str:
        return f"rkm-{self.tag}-hub"

    @property
    def host_if(self) -> str:
        return f"rk{self.tag}h"

    def _addr(self, index: int) -> str:
        return f"10.77.{self.subnet}.{index}"

    @property
    def host(self) -> Node:
        """This process's own namespace on the bridge (the players, the checks)."""
        return self.nodes["host"]

    # -- building -----------------------------------------------------------------------

    def __enter__(self) -> Network:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """The hub and its bridge, and this process's port on it (``host``)."""
        reason = available()
        if reason is not None:
            raise RuntimeError(reason)
        STATE.mkdir(parents=True, exist_ok=True)
        LOCK.parent.mkdir(parents=True, exist_ok=True)
        with LOCK.open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            _sweep_stale()
            self.subnet = _free_subnet()
            (STATE / self.tag).write_text(f"{os.getpid()} {self.subnet}\n")
            self._up = True
            try:
                self._build_hub()
            except BaseException:
                self.close()
                raise

    def _build_hub(self) -> None:
        hub = self.hub
        _run("ip", "netns", "add", hub)
        _run("ip", "-n", hub, "link", "set", "lo", "up")
        _run("ip", "-n", hub, "link", "add", "br0", "type", "bridge")
        _run("ip", "-n", hub, "link", "set", "br0", "up")
        _run("ip", "netns", "exec", hub, "nft", "-f", "-", input=_NFT_RULES)
        # This process's port: the host end keeps the name, the other joins the bridge.
        _run("ip", "link", "add", self.host_if, "type", "veth", "peer", "name", "up0",
             "netns", hub)  # fmt: skip
        _run("ip", "-n", hub, "link", "set", "up0", "master", "br0", "up")
        _run("ip", "addr", "add", f"{self._addr(1)}/24", "dev", self.host_if)
        _run("ip", "link", "set", self.host_if, "up")
        self.nodes["host"] = Node("host", self._addr(1), None)

    def add(self, name: str) -> Node:
        """A node of its own: a namespace, loopback up, ``eth0`` with the next address."""
        if name in self.nodes:
            raise ValueError(f"{name} is already on the network")
        index = len(self.nodes) + 1  # .1 is the host
        if index > 254:
            raise ValueError("a /24 holds 253 nodes")
        ns = f"rkm-{self.tag}-{name}"
        port = f"rk{self.tag}p{index}"
        _run("ip", "netns", "add", ns)
        node = Node(name, self._addr(index), ns)
        self.nodes[name] = node
        _run("ip", "-n", ns, "link", "set", "lo", "up")
        _run("ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", port,
             "netns", self.hub)  # fmt: skip
        _run("ip", "-n", self.hub, "link", "set", port, "master", "br0", "up")
        _run("ip", "-n", ns, "addr", "add", f"{node.addr}/24", "dev", "eth0")
        _run("ip", "-n", ns, "link", "set", "eth0", "up")
        return node

    # -- faults -------------------------------------------------------------------------

    def cut(self, a: Iterable[Node | str], b: Iterable[Node | str]) -> Cut:
        """Drop every packet between a node of ``a`` and a node of ``b``, both ways,
        until ``heal``. Nodes by themselves or by name."""
        made = Cut(tuple(self._address(n) for n in a), tuple(self._address(n) for n in b))
        new = []
        for pair in made.pairs():
            if not self._dropped[pair]:
                new.append(pair)
            self._dropped[pair] += 1
        self._cuts.append(made)
        if new:
            self._elements("add", new)
        return made

    def heal(self, cut: Cut | None = None) -> None:
        """Undo ``cut`` (every cut if None): its pairs pass again unless another holds them."""
        cuts = list(self._cuts) if cut is None else [cut]
        gone = []
        for one in cuts:
            self._cuts.remove(one)
            for pair in one.pairs():
                self._dropped[pair] -= 1
                if not self._dropped[pair]:
                    del self._dropped[pair]
                    gone.append(pair)
        if gone:
            self._elements("delete", gone)

    @property
    def cuts(self) -> list[Cut]:
        return list(self._cuts)

    def _address(self, node: Node | str) -> str:
        return (self.nodes[node] if isinstance(node, str) else node).addr

    def _elements(self, verb: str, pairs: list[tuple[str, str]]) -> None:
        elements = ", ".join(f"{x} . {y}" for x, y in sorted(set(pairs)))
        _run("ip", "netns", "exec", self.hub, "nft", verb, "element", "bridge", NFT_TABLE,
             "pairs", f"{{ {elements} }}")  # fmt: skip

    def dropped(self) -> set[tuple[str, str]]:
        """The (source, destination) pairs the bridge drops now, as nft lists them."""
        text = _run("ip", "netns", "exec", self.hub, "nft", "list", "set", "bridge",
                    NFT_TABLE, "pairs")  # fmt: skip
        return set(re.findall(r"(\d+\.\d+\.\d+\.\d+) \. (\d+\.\d+\.\d+\.\d+)", text))

    # -- teardown -----------------------------------------------------------------------

    def namespaces(self) -> list[str]:
        return [node.ns for node in self.nodes.values() if node.ns] + [self.hub]

    def close(self) -> None:
        """Kill what still runs in this network's namespaces; delete them and the host's
        veth (the bridge, the other veths and the nft table go with their namespaces)."""
        if not self._up:
            return
        _teardown(self.tag)
        self.nodes.clear()
        self._cuts.clear()
        self._dropped.clear()
        self._up = False


_NFT_RULES = f"""
table bridge {NFT_TABLE} {{
    set pairs {{
        type ipv4_addr . ipv4_addr
    }}
    chain forward {{
        type filter hook forward priority 0; policy accept;
        ip saddr . ip daddr @pairs drop
    }}
}}
"""


def _free_subnet() -> int:
    """A ``10.77.N.0/24`` that no address or route of this namespace is in (under LOCK)."""
    used = set()
    text = _run("ip", "-4", "-o", "addr", "show") + _run("ip", "-4", "route", "show")
    for found in re.findall(r"(\d+\.\d+\.\d+\.\d+)(?:/(\d+))?", text):
        try:
            net = ipaddress.ip_network(f"{found[0]}/{found[1] or 32}", strict=False)
        except ValueError:
            continue
        for n in SUBNETS:
            if net.overlaps(ipaddress.ip_network(f"10.77.{n}.0/24")):
                used.add(n)
    for path in STATE.iterdir():
        with contextlib.suppress(ValueError, IndexError, OSError):
            used.add(int(path.read_text().split()[1]))
    for n in SUBNETS:
        if n not in used:
            return n
    raise RuntimeError("no free 10.77.N.0/24 left")


def _teardown(tag: str) -> None:
    prefix = f"rkm-{tag}-"
    names = [n.split()[0] for n in _run("ip", "netns", "list").splitlines() if n.strip()]
    mine = [n for n in names if n.startswith(prefix)]
    for ns in mine:  # every process in them was started in them by this harness
        for pid in _run("ip", "netns", "pids", ns, check=False).split():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
    for ns in mine:
        _run("ip", "netns", "del", ns, check=False)
    _run("ip", "link", "del", f"rk{tag}h", check=False)
    with contextlib.suppress(FileNotFoundError):
        (STATE / tag).unlink()


def _sweep_stale() -> None:
    """Tear down the networks whose owner process is gone (under LOCK)."""
    for path in STATE.iterdir():
        try:
            pid = int(path.read_text().split()[0])
        except (ValueError, IndexError, OSError):
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            _teardown(path.name)
        except PermissionError:
            pass
