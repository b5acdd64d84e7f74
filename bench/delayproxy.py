"""A network's round trip on loopback, for the benchmarks: a delay proxy, a TLS front and a test CA.

    client ──TLS──▶ Relay(rtt) ──▶ Relay(tls=…) ──▶ flowedit serve (plain ws:// and http://)
                    delays each chunk   TLS ends here

`Relay` listens on 127.0.0.1, port 0, and forwards bytes both ways. Each direction is a queue of (due
time, chunk) drained in order by one writer: a chunk is delivered RTT/2 after it was read, and holding it
never holds back reading the next ones (ordering kept, throughput not serialised). The TCP handshake,
which the kernel completes at once on loopback, costs its round trip as on a network: nothing the client
sends is forwarded before one RTT after its connection was accepted. The bytes are still encrypted when
they are delayed, so a TLS handshake pays its round trip as with a remote endpoint. No bandwidth limit and
no loss: a round trip, nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import trustme

READ_BYTES = 2**16


class LoopbackCA:
    """A CA made at run time and a server certificate for 127.0.0.1 / localhost it signed."""

    def __init__(self, directory: Path) -> None:
        ca = trustme.CA()
        self.server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1", "localhost").configure_cert(self.server)
        self.client = ssl.create_default_context()  # verifies the certificate and the host name
        ca.configure_trust(self.client)
        self.ca_file = directory / "loopback-ca.pem"  # for ModelLink(ca_file=…)
        ca.cert_pem.write_to_path(str(self.ca_file))


class Relay:
    """A TCP relay on 127.0.0.1 to `port`: each chunk delivered `rtt`/2 seconds after it was read, each
    way, the client's first bytes one `rtt` after it connected (the TCP handshake); `tls` (a server
    context) makes it end TLS on its listening side."""

    def __init__(self, port: int, rtt: float = 0.0, tls: ssl.SSLContext | None = None) -> None:
        self.upstream, self.rtt, self.tls = port, rtt, tls
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def __aenter__(self) -> Relay:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:  # the pipes then read their ends and finish (a cancelled
            writer.close()  # connection callback would be logged by asyncio as an error)
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _accept(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        accepted = asyncio.get_running_loop().time()
        writers = {client_w}
        self._writers |= writers
        try:
            upstream_r, upstream_w = await asyncio.open_connection("127.0.0.1", self.upstream)
            writers.add(upstream_w)
            self._writers.add(upstream_w)
            await asyncio.gather(_pipe(client_r, upstream_w, self.rtt / 2, accepted + self.rtt),
                                 _pipe(upstream_r, client_w, self.rtt / 2, accepted))
        except OSError:
            pass  # the gateway refused or is gone: the client sees its connection closed
        finally:
            for writer in writers:
                writer.close()
            self._writers -= writers
            self._tasks.discard(task)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float, opens: float) -> None:
    """Copy `reader` to `writer`, each chunk (and the end) `delay` after it was read, none before `opens`."""
    loop = asyncio.get_running_loop()
    due: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def read() -> None:
        chunk = b"-"
        while chunk:
            try:
                chunk = await reader.read(READ_BYTES)
            except (ConnectionError, ssl.SSLError):  # a reset, a TLS failure: the end of this way
                chunk = b""
            due.put_nowait((max(loop.time(), opens) + delay, chunk))

    reading = asyncio.create_task(read())
    try:
        while True:
            when, chunk = await due.get()
            if when > loop.time():
                await asyncio.sleep(when - loop.time())
            if not chunk:
                break
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()  # a half-close goes on: the other way may still be sending
        else:
            writer.close()
    except (ConnectionError, ssl.SSLError):
        writer.close()
    finally:
        reading.cancel()


@contextlib.asynccontextmanager
async def remote(port: int, rtt: float, tls: ssl.SSLContext) -> AsyncIterator[int]:
    """A port on 127.0.0.1 that reaches `port` as a remote TLS endpoint `rtt` seconds away would."""
    async with Relay(port, tls=tls) as front, Relay(front.port, rtt) as delay:
        yield delay.port
