"""The blocking client shows the async client's real parameters: to help(), IPython, editors and mypy."""

from __future__ import annotations

import importlib
import inspect
import pydoc
import typing
from pathlib import Path

import anyio
import pytest

from chainframe.decode import keccak256
from chainframe.devnet import Devnet
from chainframe.rpc import AsyncClient, Client

ROOT = Path(__file__).resolve().parents[2]
ASYNC_METHODS = sorted(
    name for name, f in inspect.getmembers(AsyncClient, inspect.iscoroutinefunction) if not name.startswith("_")
)


def test_every_async_method_has_a_blocking_twin_with_its_signature() -> None:
    assert {"get_block", "get_logs", "trace_call", "batch", "request"} <= set(ASYNC_METHODS)
    for name in ASYNC_METHODS:
        blocking = getattr(Client, name)
        assert inspect.signature(blocking) == inspect.signature(getattr(AsyncClient, name)), name
        # The result classes are imported where used (an extraction never pays for them): resolve their names there.
        types = vars(importlib.import_module("chainframe.rpc._types"))
        hints = typing.get_type_hints(blocking, localns=types)
        assert hints == typing.get_type_hints(getattr(AsyncClient, name), localns=types), name
        assert not inspect.iscoroutinefunction(blocking)


def test_the_constructor_takes_the_async_clients_options() -> None:
    assert inspect.signature(Client) == inspect.signature(AsyncClient)
    assert "batch_size: 'int' = 50" in pydoc.render_doc(Client, renderer=pydoc.plaintext)


def test_help_shows_the_parameters() -> None:
    text = pydoc.render_doc(Client.get_logs, renderer=pydoc.plaintext)
    assert "get_logs(self, *, from_block:" in text
    assert "*args" not in text
    with Client("http://127.0.0.1:9") as client:  # bound: no self
        assert str(inspect.signature(client.get_block)) == (
            "(block: 'p.BlockParam', *, full_transactions: 'bool' = False) -> 'Block | None'"
        )


def test_mypy_sees_the_parameters_and_results(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "uses_client.py"
    snippet.write_text(
        "from chainframe.rpc import Client\n"
        "client = Client('http://127.0.0.1:8545')\n"
        "reveal_type(client.get_block(1))\n"
        "client.get_block(1, full_transaction=True)\n"
        "client.trace_call('0x00')\n"
        "Client('http://127.0.0.1:8545', batch_sise=5)\n"
    )
    out, _, status = api.run([str(snippet), "--strict", "--cache-dir", str(ROOT / ".mypy_cache")])
    assert status == 1
    assert 'Revealed type is "chainframe.rpc._types.Block | None"' in out
    assert 'Unexpected keyword argument "full_transaction"; did you mean "full_transactions"?' in out
    assert "uses_client.py:5: error: Too many positional arguments" in out
    assert 'Unexpected keyword argument "batch_sise" for "Client"; did you mean "batch_size"?' in out


def test_trace_call_as_documented_gives_what_the_async_one_gives(devnet: Devnet) -> None:
    nest = devnet.truth.contracts["Nest"]
    dive = keccak256(b"dive(uint256)")[:4] + (3).to_bytes(32, "big")
    with Client(devnet.http_url) as client:
        tree = client.trace_call(to=nest, data=dive, block=200, with_log=True)

    async def main() -> object:
        async with AsyncClient(devnet.http_url) as client:
            return await client.trace_call(to=nest, data=dive, block=200, with_log=True)

    assert tree == anyio.run(main)
    assert tree.depth() == 4
    assert [len(frame.logs) for frame in (tree, tree.calls[0])] == [1, 1]
