"""bench/delayproxy.py puts a network's round trip on loopback: a chunk takes RTT/2 each way, a new
connection one RTT more (the TCP handshake), a TLS handshake through it one more; bytes arrive whole and
in order."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from delayproxy import LoopbackCA, Relay, remote  # noqa: E402

RTT = 0.05
SLACK = 0.5  # a busy machine's event loop may wake late (the proxy never delivers early); 1 MiB held
# chunk by chunk would take many RTTs: the bound still catches a proxy that holds a chunk per round trip


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(2**16):
        writer.write(data)
        await writer.drain()
    writer.close()


async def round_trip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: bytes) -> bytes:
    writer.write(data)
    return await reader.readexactly(len(data))


@pytest.mark.slow  # wall-clock bounds
async def test_a_round_trip_through_the_relay_takes_the_rtt_and_keeps_the_bytes_in_order() -> None:
    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    async with server, Relay(server.sockets[0].getsockname()[1], RTT) as relay:
        start = time.perf_counter()
        reader, writer = await asyncio.open_connection("127.0.0.1", relay.port)
        assert await round_trip(reader, writer, b"ping") == b"ping"
        first = time.perf_counter() - start
        start = time.perf_counter()
        blob = bytes(range(256)) * 4096  # 1 MiB: many chunks, each held RTT/2, none lost or reordered
        assert await round_trip(reader, writer, blob) == blob
        second = time.perf_counter() - start
        writer.close()
    assert 2 * RTT <= first < 2 * RTT + SLACK  # the handshake's round trip, then the ping's
    assert RTT <= second < RTT + SLACK  # (+ copying 2 MiB through Python, both ways)


@pytest.mark.slow  # wall-clock bounds
async def test_tls_through_the_delay_pays_its_handshake_and_trusts_the_test_ca(tmp_path: Path) -> None:
    ca = LoopbackCA(tmp_path)
    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    async with server, remote(server.sockets[0].getsockname()[1], RTT, ca.server) as port:
        start = time.perf_counter()
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ca.client)
        assert await round_trip(reader, writer, b"ping") == b"ping"
        elapsed = time.perf_counter() - start
        writer.close()
    assert 3 * RTT <= elapsed < 3 * RTT + SLACK  # TCP, TLS 1.3, then the ping
    assert ca.ca_file.read_text().startswith("-----BEGIN CERTIFICATE-----")
