"""Servers the tests and benchmarks start take their ports from MEMORYBOARD_TEST_PORTS when it is set
(tests.ports), so that parallel runs given different ranges never meet."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ports
from tests.fakes.openai_server import FakeOpenAI

ROOT = Path(__file__).resolve().parents[2]


def _a_free_range(size: int) -> tuple[int, int]:
    """``size`` consecutive ports free now, found by binding them."""
    for low in range(41000, 60000, 97):
        socks = []
        try:
            for port in range(low, low + size):
                sock = socket.socket()
                socks.append(sock)
                sock.bind((ports.HOST, port))
            return low, low + size - 1
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
    pytest.skip("no free range of ports")


def test_ports_come_from_the_range_and_skip_taken_and_given_ones(monkeypatch):
    low, high = _a_free_range(4)
    monkeypatch.setenv(ports.PORTS_VARIABLE, f"{low}-{high}")
    with socket.socket() as taken:
        taken.bind((ports.HOST, low + 1))
        got = {ports.free_port() for _ in range(3)}
        assert got == {low, low + 2, low + 3}
        with pytest.raises(OSError, match=ports.PORTS_VARIABLE):
            ports.free_port()  # the others were handed out once already


def test_the_fake_openai_server_binds_inside_the_range(monkeypatch):
    low, high = _a_free_range(8)
    monkeypatch.setenv(ports.PORTS_VARIABLE, f"{low}-{high}")
    with FakeOpenAI() as server:
        assert low <= server.port <= high


def test_a_subprocess_server_helper_uses_the_range(monkeypatch):
    """benchmarks/slow_turns.py's helper (also used by test_slow_turns) asks tests.ports, in the child too."""
    low, high = _a_free_range(8)
    env = {"MEMORYBOARD_TEST_PORTS": f"{low}-{high}", "PATH": ""}
    code = "import sys; sys.path.insert(0, '.'); from benchmarks.slow_turns import free_port; print(free_port())"
    port = int(subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                              capture_output=True, text=True).stdout)
    assert low <= port <= high


@pytest.mark.parametrize("spec", ["40000-", "abc", "5-4", "0-10", "70000"])
def test_a_bad_range_is_refused_by_name(monkeypatch, spec):
    monkeypatch.setenv(ports.PORTS_VARIABLE, spec)
    with pytest.raises(ValueError, match=ports.PORTS_VARIABLE):
        ports.free_port()


def test_without_a_range_the_system_picks(monkeypatch):
    monkeypatch.delenv(ports.PORTS_VARIABLE, raising=False)
    assert ports.port_range() is None
    assert ports.free_port() > 0


def test_the_live_server_is_given_a_port_of_the_range():
    """tests/conftest.py hands pytest-django's live server (DJANGO_LIVE_TEST_SERVER_ADDRESS) a port of the range."""
    low, high = _a_free_range(8)
    env = {"MEMORYBOARD_TEST_PORTS": f"{low}-{high}", "PATH": "", "DJANGO_SETTINGS_MODULE": "memoryboard.settings"}
    code = "import os, sys; sys.path.insert(0, '.'); import tests.conftest; print(os.environ['DJANGO_LIVE_TEST_SERVER_ADDRESS'])"
    address = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                             capture_output=True, text=True).stdout.strip()
    host, port = address.rsplit(":", 1)
    assert host == "localhost" and low <= int(port) <= high
