"""`flowedit lsp`'s stdin as editors hand it over: a pipe or a socket (read on the event loop), anything
else — a file here, a terminal by hand — read by a thread (lsp/stdio.py). Each way the server answers; at
the editor's `exit` it ends, also while the editor keeps its end open."""

from __future__ import annotations

import json
import socket
import subprocess
from typing import BinaryIO

import pytest

from flowedit.editor_standin.client import SERVER_COMMAND

TIMEOUT = 30  # a guard against a hang, never a wait


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


INITIALIZE = frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"capabilities": {}, "processId": None}}) + \
    frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
SHUTDOWN = frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
EXIT = frame({"jsonrpc": "2.0", "method": "exit", "params": None})


def answer(stdout: BinaryIO, wanted: int) -> dict:
    """Read the server's messages up to its answer to request `wanted`."""
    while True:
        fields = {}
        while (line := stdout.readline().rstrip(b"\r\n")):
            name, _, value = line.partition(b": ")
            fields[name] = value
        assert fields, "the server's output ended"
        message = json.loads(stdout.read(int(fields[b"Content-Length"])))
        if message.get("id") == wanted and "method" not in message:
            return message


@pytest.mark.parametrize("kind", ["pipe", "socket"])
def test_over_a_pipe_or_a_socket_the_server_answers_and_ends_at_exit_with_the_editor_end_still_open(kind):
    ours, theirs = socket.socketpair() if kind == "socket" else (None, subprocess.PIPE)
    server = subprocess.Popen(SERVER_COMMAND, stdin=theirs, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    send = ours.sendall if ours is not None else lambda data: (server.stdin.write(data), server.stdin.flush())
    try:
        send(INITIALIZE)
        assert answer(server.stdout, 1)["result"]["serverInfo"]["name"] == "flowedit"
        send(SHUTDOWN)
        assert answer(server.stdout, 2)["result"] is None
        send(EXIT)  # and the editor's end stays open
        assert server.wait(timeout=TIMEOUT) == 0
    finally:
        server.kill()
        for end in (ours, theirs) if ours is not None else (server.stdin,):
            end.close()


def test_from_a_file_the_server_reads_with_a_thread_answers_and_ends_at_its_end(tmp_path):
    conversation = tmp_path / "conversation.bin"
    conversation.write_bytes(INITIALIZE)
    with conversation.open("rb") as stdin:
        server = subprocess.Popen(SERVER_COMMAND, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            assert answer(server.stdout, 1)["result"]["serverInfo"]["name"] == "flowedit"
            server.wait(timeout=TIMEOUT)  # the file's end is the editor gone
        finally:
            server.kill()


@pytest.mark.parametrize("kind", ["pipe", "socket"])
def test_an_editor_that_leaves_right_after_start_up_takes_the_server_with_it(kind):
    """No `shutdown`, no `exit`: its end closed just after `initialize` was answered, while the embedded
    engine's process is being started (cancelled halfway, that start waited for ever: the server stayed)."""
    for _ in range(3):
        ours, theirs = socket.socketpair() if kind == "socket" else (None, subprocess.PIPE)
        server = subprocess.Popen(SERVER_COMMAND, stdin=theirs, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            if ours is not None:
                theirs.close()
                ours.sendall(INITIALIZE)
                assert answer(server.stdout, 1)["result"]["serverInfo"]["name"] == "flowedit"
                ours.close()
            else:
                server.stdin.write(INITIALIZE)
                server.stdin.flush()
                assert answer(server.stdout, 1)["result"]["serverInfo"]["name"] == "flowedit"
                server.stdin.close()
            server.wait(timeout=TIMEOUT)
            said = server.stdout.read().decode()
            assert "did not stop" not in said, said  # every task ended: nothing was left behind
        finally:
            server.kill()
