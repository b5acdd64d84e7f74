"""Direct remote endpoints: `wss://` with a test CA, an HTTP CONNECT proxy, and the messages a user sees.

The endpoint is a loopback TLS WebSocket server whose certificate comes from a CA made by the test
(trustme); the proxy is a tiny asyncio CONNECT proxy that records what it was asked and relays bytes.
Every failure must reach the caller as one of flowedit's exceptions whose `str()` tells the user what
to change, and never contain the key.
"""

import asyncio
import functools
import importlib.util
import json
import logging
import os
import socket
import ssl
from http import HTTPStatus

import pytest
import trustme
from pydantic import BaseModel
from websockets.asyncio.server import ServerConnection, serve

from flowedit.model import wire
from flowedit.model.errors import ModelConnectionLost, ModelHandshakeFailed
from flowedit.model.fake import FakePeer
from flowedit.model.link import ModelLink
from flowedit.model.errors import ModelSetupFailed

API_KEY = "sk-tls-test-never-shown"
REMOTE = "llm.corp.test"


@pytest.fixture(autouse=True)
def no_proxy_from_the_machine(monkeypatch):
    """Tests set the proxy variables they need; the machine's own must not leak in."""
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)


@pytest.fixture
def resolver(monkeypatch):
    """The machine's resolver, plus `llm.corp.test` (the remote endpoint, really on 127.0.0.1) and an
    unknown `*.invalid` answered at once: loopback names are never proxied, remote ones are."""
    resolve = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        if str(host).endswith(".invalid"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return resolve("127.0.0.1" if host == REMOTE else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture(scope="module")
def ca():
    return trustme.CA()


@functools.cache
def server_cert(ca: trustme.CA) -> trustme.LeafCert:
    """One server certificate per CA (key generation is the slow part)."""
    return ca.issue_cert("127.0.0.1", REMOTE)


@pytest.fixture
def ca_file(ca, tmp_path):
    path = tmp_path / "corporate-ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


class TlsPeer(FakePeer):
    """The fake's answering helpers (`respond`) over a real server socket."""

    def __init__(self, ws: ServerConnection) -> None:
        super().__init__(1, ws.request.path, {})
        self.ws = ws

    async def send(self, event) -> bool:
        await self.ws.send(wire.encode(event) if isinstance(event, BaseModel) else json.dumps(event))
        return True


class TlsEndpoint:
    """A Responses WebSocket server on 127.0.0.1 behind TLS: 404 off /v1/responses, 401 without the key."""

    def __init__(self, ca: trustme.CA, name: str = "127.0.0.1") -> None:
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server_cert(ca).configure_cert(self.context)
        self.name = name
        self.upgrades = 0

    async def __aenter__(self) -> "TlsEndpoint":
        self._server = await serve(self._answer, "127.0.0.1", 0, ssl=self.context, process_request=self._check)
        self.host = f"{self.name}:{self._server.sockets[0].getsockname()[1]}"
        self.url = f"wss://{self.host}/v1/responses"
        return self

    async def __aexit__(self, *exc_info) -> None:
        self._server.close()
        await self._server.wait_closed()

    def _check(self, connection, request):
        self.upgrades += 1
        if request.path.partition("?")[0] != "/v1/responses":
            return connection.respond(HTTPStatus.NOT_FOUND, "no such endpoint\n")
        if request.headers.get("Authorization") != f"Bearer {API_KEY}":
            # What OpenAI does: the body echoes part of the key, so it must never be quoted.
            return connection.respond(HTTPStatus.UNAUTHORIZED, f"Incorrect API key provided: {API_KEY[:8]}\n")
        return None

    async def _answer(self, ws: ServerConnection) -> None:
        peer = TlsPeer(ws)
        async for frame in ws:
            event = wire.decode_client_event(frame)
            if isinstance(event, wire.ResponseCreate):
                await peer.respond(event, "through TLS")


class ConnectProxy:
    """An HTTP CONNECT proxy: records each request head, answers `status`, then relays both ways."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.requests: list[str] = []
        self.relayed = bytearray()  # what the client sent inside the tunnel
        self._tasks: set[asyncio.Task] = set()

    async def __aenter__(self) -> "ConnectProxy":
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc_info) -> None:
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._tasks.add(asyncio.current_task())
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        self.requests.append(head)
        if self.status != 200:
            writer.write(f"HTTP/1.1 {self.status} {HTTPStatus(self.status).phrase}\r\n"
                         'Proxy-Authenticate: Basic realm="corp"\r\nContent-Length: 0\r\n\r\n'.encode())
            await writer.drain()
            writer.close()
            return
        host, port = head.split()[1].rsplit(":", 1)
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        try:
            await asyncio.gather(self._pipe(reader, up_writer, record=True), self._pipe(up_reader, writer))
        finally:
            writer.close()
            up_writer.close()

    async def _pipe(self, reader, writer, record=False) -> None:
        while data := await reader.read(65536):
            if record:
                self.relayed += data
            writer.write(data)
            await writer.drain()
        writer.write_eof()


def ask() -> wire.ResponseCreate:
    return wire.ResponseCreate(model="m", input="q")


def key(value: str = API_KEY) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


async def refusal(url: str, **options) -> ModelConnectionLost:
    """The exception a first request on a new link raises (no retries, so no waiting)."""
    options.setdefault("headers", key())
    async with ModelLink(url, connect_attempts=1, **options) as link:
        with pytest.raises(ModelConnectionLost) as caught:
            await link.request(ask())
    failure = caught.value
    assert API_KEY not in str(failure) and API_KEY[:8] not in str(failure)
    assert failure.__cause__ is None and failure.__suppress_context__  # no foreign traceback attached
    return failure


async def test_with_ca_file_a_response_streams_over_tls(ca, ca_file):
    async with TlsEndpoint(ca) as endpoint, ModelLink(endpoint.url, headers=key(), ca_file=ca_file) as link:
        assert await (await link.request(ask())).text() == "through TLS"


async def test_without_the_ca_the_certificate_is_not_trusted_and_not_retried(ca):
    async with TlsEndpoint(ca) as endpoint:
        async with ModelLink(endpoint.url, headers=key(), backoff_factory=lambda: iter([0.0] * 9)) as link:
            with pytest.raises(ModelSetupFailed) as caught:
                await link.request(ask())
    message = str(caught.value)
    assert message.startswith(f"the certificate of {endpoint.host} is not trusted")
    assert "set ca_file to its CA bundle" in message and "gave up" not in message
    assert endpoint.upgrades == 0  # the key never left the machine


async def test_an_unreadable_ca_file_names_the_setting(ca, tmp_path):
    async with TlsEndpoint(ca) as endpoint:
        failure = await refusal(endpoint.url, ca_file=tmp_path / "missing.pem")
    assert isinstance(failure, ModelSetupFailed)
    assert str(failure).startswith(f"cannot use ca_file {tmp_path / 'missing.pem'}: No such file")


async def test_https_proxy_carries_the_tls_connection_through_connect(ca, ca_file, resolver, monkeypatch):
    async with TlsEndpoint(ca, REMOTE) as endpoint, ConnectProxy() as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        async with ModelLink(endpoint.url, headers=key(), ca_file=ca_file) as link:
            assert await (await link.request(ask())).text() == "through TLS"
    assert [r.splitlines()[0] for r in proxy.requests] == [f"CONNECT {endpoint.host} HTTP/1.1"]
    assert proxy.relayed and API_KEY.encode() not in proxy.relayed  # end-to-end TLS inside the tunnel


async def test_behind_an_inspecting_proxy_without_ca_file_the_message_names_proxy_and_setting(
        ca, resolver, monkeypatch):
    async with TlsEndpoint(ca, REMOTE) as endpoint, ConnectProxy() as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        failure = await refusal(endpoint.url)
    assert isinstance(failure, ModelSetupFailed) and len(proxy.requests) == 1
    assert str(failure).startswith(f"the certificate of {endpoint.host} is not trusted (")
    assert str(failure).endswith(f"through the proxy at {proxy.url}: if a corporate proxy inspects TLS, set "
                                 "ca_file to its CA bundle")


async def test_no_proxy_bypasses_the_proxy(ca, ca_file, resolver, monkeypatch):
    async with TlsEndpoint(ca, REMOTE) as endpoint, ConnectProxy() as proxy:
        monkeypatch.setenv("https_proxy", proxy.url)
        monkeypatch.setenv("no_proxy", "example.com,.corp.test")
        async with ModelLink(endpoint.url, headers=key(), ca_file=ca_file) as link:
            assert await (await link.request(ask())).text() == "through TLS"
    assert proxy.requests == []


async def test_a_loopback_endpoint_never_goes_through_the_environment_proxy(ca, ca_file, monkeypatch):
    async with TlsEndpoint(ca) as endpoint, ConnectProxy() as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)  # no NO_PROXY: websockets alone would proxy 127.0.0.1
        async with ModelLink(endpoint.url, headers=key(), ca_file=ca_file) as link:
            assert await (await link.request(ask())).text() == "through TLS"
    assert proxy.requests == []


async def test_a_proxy_answering_407_is_named_without_its_password(ca, ca_file, resolver, monkeypatch):
    async with TlsEndpoint(ca, REMOTE) as endpoint, ConnectProxy(status=407) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url.replace("http://", "http://alice:proxy-pw-123@"))
        async with ModelLink(endpoint.url, headers=key(), ca_file=ca_file,
                             backoff_factory=lambda: iter([0.0] * 9)) as link:
            with pytest.raises(ModelHandshakeFailed) as caught:
                await link.request(ask())
    failure = caught.value
    assert failure.status == 407 and len(proxy.requests) == 1  # refused credentials are not retried
    assert str(failure).startswith(f"the proxy at {proxy.url} refused the connection to {endpoint.host} "
                                   "(HTTP 407 Proxy Authentication Required)")
    assert "proxy-pw-123" not in str(failure) and "Proxy-Authorization: Basic" in proxy.requests[0]


async def test_a_proxy_that_is_not_listening_is_named(ca, ca_file, resolver, monkeypatch):
    async with ConnectProxy() as proxy:
        gone = proxy.url
    async with TlsEndpoint(ca, REMOTE) as endpoint:
        monkeypatch.setenv("HTTPS_PROXY", gone)
        failure = await refusal(endpoint.url, ca_file=ca_file)
    assert str(failure).startswith(f"the proxy at {gone} refused the connection")


@pytest.mark.skipif(importlib.util.find_spec("python_socks") is not None, reason="python-socks is installed")
async def test_a_socks_proxy_without_python_socks_says_what_to_install(ca, ca_file, resolver, monkeypatch):
    async with TlsEndpoint(ca, REMOTE) as endpoint:
        monkeypatch.setenv("HTTPS_PROXY", "socks5h://127.0.0.1:1080")
        failure = await refusal(endpoint.url, ca_file=ca_file)
    assert isinstance(failure, ModelSetupFailed) and "pip install python-socks" in str(failure)


async def test_401_names_the_key_setting_and_never_the_key(ca, ca_file):
    async with TlsEndpoint(ca) as endpoint:
        wrong = await refusal(endpoint.url, ca_file=ca_file, headers=key("sk-wrong-key-1234"),
                              api_key_env="CORP_LLM_KEY")
        missing = await refusal(endpoint.url, ca_file=ca_file, headers={})
    assert isinstance(wrong, ModelHandshakeFailed) and wrong.status == 401
    assert str(wrong) == (f"{endpoint.url} refused the API key (HTTP 401): check CORP_LLM_KEY / "
                          "the api_key_env setting")
    assert "sk-wrong" not in str(wrong) and "Incorrect" not in str(wrong)
    assert str(missing) == (f"{endpoint.url} wants an API key (HTTP 401) and none was sent: set "
                            "OPENAI_API_KEY or the api_key_env setting")


async def test_404_names_the_endpoint_setting_without_the_query(ca, ca_file):
    async with TlsEndpoint(ca) as endpoint:
        url = endpoint.url.replace("/v1/responses", "/v1/chat") + f"?api-key={API_KEY}"
        failure = await refusal(url, ca_file=ca_file)
    assert isinstance(failure, ModelHandshakeFailed) and failure.status == 404
    assert str(failure) == (f"no Responses WebSocket endpoint at wss://{endpoint.host}/v1/chat (HTTP 404): "
                            "check the endpoint setting")


@pytest.mark.parametrize("url", ["https://api.openai.com/v1/responses", "wss://host:port/v1/responses"])
async def test_a_malformed_endpoint_names_the_setting(url):
    failure = await refusal(url)
    assert isinstance(failure, ModelSetupFailed) and "the endpoint setting must look like wss://" in str(failure)


async def test_a_malformed_proxy_is_a_setting_message_without_its_password(ca, ca_file, resolver, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://alice:proxy-pw-123@proxy.corp:port")
    async with TlsEndpoint(ca, REMOTE) as endpoint:
        failure = await refusal(endpoint.url, ca_file=ca_file)
    assert isinstance(failure, ModelSetupFailed) and "proxy-pw-123" not in str(failure)
    assert str(failure).startswith("the proxy setting http://proxy.corp:port is not usable (")


async def test_connection_refused_names_the_endpoint_setting():
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    failure = await refusal(f"wss://127.0.0.1:{port}/v1/responses")
    assert str(failure) == (f"127.0.0.1:{port} refused the connection (nothing listens there): check the "
                            "endpoint setting, or start the local server")


async def test_a_host_name_that_does_not_resolve_is_named(resolver):
    failure = await refusal("wss://myresource.openai.invalid/openai/v1/responses")
    assert str(failure) == ("cannot resolve the host name myresource.openai.invalid: check the endpoint "
                            "setting and the network")


async def test_a_server_that_never_answers_times_out_with_the_limit_in_the_message():
    silent = await asyncio.start_server(lambda reader, writer: None, "127.0.0.1", 0)  # accepts, says nothing
    port = silent.sockets[0].getsockname()[1]
    try:
        failure = await refusal(f"wss://127.0.0.1:{port}/v1/responses", open_timeout=0.2)
    finally:
        silent.close()
    assert str(failure) == f"connecting to wss://127.0.0.1:{port}/v1/responses timed out after 0.2 s"


async def test_the_key_never_reaches_a_log_record(ca, ca_file, caplog):
    caplog.set_level(logging.DEBUG)
    async with TlsEndpoint(ca) as endpoint:
        async with ModelLink(endpoint.url + f"?api-key={API_KEY}", headers=key(), ca_file=ca_file) as link:
            assert await (await link.request(ask())).text() == "through TLS"
        await refusal(endpoint.url, ca_file=ca_file, headers=key(API_KEY + "-revoked"))
    ours = [r.getMessage() for r in caplog.records if r.name != "websockets.server"]  # not the test's server
    assert "> Authorization: ***" in ours  # websockets did log the header, masked
    assert not [m for m in ours if API_KEY in m]


@pytest.mark.parametrize(("url", "mode"), [
    ("wss://api.openai.com/v1/responses", "auto"),
    ("wss://my-resource.openai.azure.com/openai/v1/responses", "off"),
    ("wss://api.x.ai/v1/responses", "off"),
])
async def test_one_at_a_time_hosts_are_known_from_the_url(url, mode):
    async with ModelLink(url) as link:
        assert link.multiplex == mode
