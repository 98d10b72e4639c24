"""The key never appears in output, logs (ours or our libraries'), exceptions, files or metadata, whatever the URL
form: extractions through a real proxy that receives the key in each form, with logging at DEBUG.

Every public provider's documented URL form is in :data:`PROVIDERS`. Their hosts cannot be reached from a test, so
each is checked twice: as written (host and all) through every function that shows a URL, and with the provider's
path and query moved onto the local proxy for a whole extraction (there the key is found by its shape alone)."""

from __future__ import annotations

import base64
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chainframe import extract
from chainframe._redact import redact_text, redact_url, url_secrets
from chainframe.cli import main
from chainframe.devnet import Devnet
from chainframe.rpc import Endpoint, RetryPolicy, ServiceUnavailable, TransportError
from tests.engine.hostile import Hostile

SENTINEL = "SentinelKey0123456789abcdefXYZ42"

# Each provider's documented endpoint form, with a key of the shape it issues (hex, base64url, UUID, ULID, letters).
PROVIDERS: dict[str, tuple[str, str]] = {
    "Infura": ("https://mainnet.infura.io/v3/{}", "3f2a9c4e1b7d4e8fa0c5b6d7e8f90123"),
    "Infura ws": ("wss://mainnet.infura.io/ws/v3/{}", "3f2a9c4e1b7d4e8fa0c5b6d7e8f90123"),
    "Alchemy": ("https://eth-mainnet.g.alchemy.com/v2/{}", "Xy7_kP2qLm9-Rt4vWz8sNb3cDf6gHj1k"),
    "Alchemy ws": ("wss://eth-mainnet.g.alchemy.com/v2/{}", "Xy7_kP2qLm9-Rt4vWz8sNb3cDf6gHj1k"),
    "QuickNode": ("https://docs-demo.quiknode.pro/{}/", "0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c"),
    "Ankr": ("https://rpc.ankr.com/eth/{}", "9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b"),
    "Chainstack": ("https://nd-123-456-789.p2pify.com/{}", "a1b2c3d4e5f60718293a4b5c6d7e8f90"),
    "Chainstack global": ("https://ethereum-mainnet.core.chainstack.com/{}", "a1b2c3d4e5f60718293a4b5c6d7e8f90"),
    "dRPC": ("https://lb.drpc.org/ogrpc?network=ethereum&dkey={}", "AnmpasF2C0JBqeAEzxVO8aTteiMlrW4R75hpDonbV6cR"),
    "dRPC ws": ("wss://lb.drpc.org/ogws?network=ethereum&dkey={}", "AnmpasF2C0JBqeAEzxVO8aTteiMlrW4R75hpDonbV6cR"),
    "dRPC path": ("https://lb.drpc.org/ethereum/{}", "AnmpasF2C0JBqeAEzxVO8aTteiMlrW4R75hpDonbV6cR"),
    "Blast": ("https://eth-mainnet.blastapi.io/{}", "6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b"),
    "GetBlock": ("https://go.getblock.io/{}", "e7d6c5b4a39281706f5e4d3c2b1a0f9e"),
    "GetBlock query": ("https://eth.getblock.io/mainnet/?api_key={}", "e7d6c5b4-a392-8170-6f5e-4d3c2b1a0f9e"),
    "Tenderly": ("https://mainnet.gateway.tenderly.co/{}", "kQwErTyUiOpAsDfGhJkLzXcV"),  # letters only: by host
    "BlockPI": ("https://ethereum.blockpi.network/v1/rpc/{}", "5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b"),
    "Llamarpc": ("https://eth.llamarpc.com/rpc/{}", "01HSE2JTMQXRV6VX6EHQDTWB4B"),
    "Cloudflare": ("https://cloudflare-eth.com/v1/mainnet", ""),  # no key: the URL is shown whole
}
READABLE = ("network=ethereum", "mainnet", "ethereum", "/v1/", "/rpc/", "ogrpc")


def forms(base: str) -> dict[str, tuple[str, str]]:
    """Every form on the local proxy ``base``: (URL, key). Providers' forms keep their path and query."""
    host = base.removeprefix("http://").rstrip("/")
    ours = {
        "infura path": f"{base}v3/{SENTINEL}",
        "alchemy path": f"{base}v2/{SENTINEL}",
        "token segment": f"{base}{SENTINEL}/",
        "apikey query": f"{base}rpc?apikey={SENTINEL}",
        "key query": f"{base}rpc?chain=1&key={SENTINEL}",
        "basic auth": f"http://user:{SENTINEL}@{host}/rpc",
        "short path token": f"{base}k3y9x2ab",
    }
    found = {name: (url, SENTINEL if name != "short path token" else "k3y9x2ab") for name, url in ours.items()}
    for name, (form, key) in PROVIDERS.items():
        if key and not form.startswith("wss") and name != "Tenderly":  # Tenderly's all-letter key: by host only
            path = form.format(key).split("/", 3)[3]
            found[f"{name} shape"] = (f"{base}{path}", key)
    return found


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_every_provider_form_is_redacted_wherever_a_url_is_shown(provider: str) -> None:
    form, key = PROVIDERS[provider]
    url = form.format(key)
    endpoint = Endpoint.from_url(url)
    error = TransportError("connection failed")
    error.attach(method="eth_chainId", blocks=(0, 9), endpoint=url, secret=endpoint.key)
    shown = {
        "redact_url": redact_url(url),
        "redact_text": redact_text(f"GET {url} failed: {url}."),
        "display": endpoint.display,
        "repr": repr(endpoint),
        "error": f"{error} {error!r} {error.endpoint}",
    }
    for where, text in shown.items():
        if key:
            assert key not in text, where
            assert "<redacted>" in text, where
        for word in READABLE:  # what says which network and product stays readable
            assert text.count(word) >= url.count(word) // (2 if where == "redact_text" else 1) or word not in url, where
    assert key in url_secrets(url) if key else url_secrets(url) == []
    assert endpoint.key == key
    assert shown["redact_url"] == url.replace(key, "<redacted>") if key else url


# One form runs the command as its own process (what a user's shell shows); the others run it in this process, where
# its output and its log records are caught the same way at a tenth of the CPU (a process imports the whole package).
PROCESS_FORM = "infura path"


def _command(
    argv: list[str], url: str, capsys: pytest.CaptureFixture[str], *, as_process: bool
) -> subprocess.CompletedProcess[str]:
    """``chainframe ARGV`` with ``RPC_URL`` set to ``url``: its exit code and what it printed."""
    if as_process:
        return subprocess.run(
            [sys.executable, "-m", "chainframe.cli", *argv], capture_output=True, text=True, timeout=120,
            env={**os.environ, "RPC_URL": url},
        )  # fmt: skip
    before = capsys.readouterr()  # the test's own output so far, kept with the command's: all of it is searched
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RPC_URL", url)
        code = main(argv)
    printed = capsys.readouterr()
    return subprocess.CompletedProcess(argv, code, before.out + printed.out, before.err + printed.err)


def _everything_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


@pytest.mark.parametrize("form", sorted(forms("http://h/")))
def test_the_key_is_never_shown_logged_raised_or_written(
    devnet: Devnet, tmp_path: Path, form: str, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    with Hostile(devnet.node.url) as proxy:
        url, key = forms(proxy.url)[form]
        report = extract(["blocks", "logs"], blocks="0:30", out=tmp_path / "py", rpc=url, progress=False)
        print(report.summary())
        seen = "\n".join(proxy.seen)
        basic = base64.b64encode(f"user:{SENTINEL}".encode()).decode()
        assert key in seen or basic in seen  # the key really travelled, in this form
        argv = ["extract", "blocks", "--blocks", "0:30", "--rpc-env", "RPC_URL", "--out", str(tmp_path / "cli"),
                "--no-progress"]  # fmt: skip
        cli = _command(argv, url, capsys, as_process=form == PROCESS_FORM)
        assert cli.returncode == 0, cli.stderr
    with Hostile(devnet.node.url, status=503) as failing, pytest.raises(ServiceUnavailable) as caught:
        extract("blocks", blocks="0:30", out=tmp_path / "err", rpc=forms(failing.url)[form][0], progress=False,
                client_options={"retry": RetryPolicy(attempts=2, initial_wait=0.01)})  # fmt: skip
    out = capsys.readouterr()
    texts = {
        "log records": "\n".join(f"{r.name} {r.getMessage()}" for r in caplog.records),
        "stdout": out.out + cli.stdout,
        "stderr": out.err + cli.stderr,
        "error": f"{caught.value!s} {caught.value!r} {caught.value.endpoint}",
    }
    # The log was listened to where a URL could leak: chainframe's client logged its retry with the error, which
    # names the endpoint (its host and port, shown, and its key, redacted).
    retried = [r.getMessage() for r in caplog.records if r.name == "chainframe.rpc" and "retrying" in r.getMessage()]
    assert retried
    assert all(failing.url.split("//")[1].split("/")[0] in message for message in retried), retried
    for where, text in texts.items():
        assert key not in text, where
        if "network=ethereum" in url and "/ogrpc?" in text:  # the URL is shown: which network it reads stays readable
            assert "/ogrpc?network=ethereum&dkey=<redacted>" in text, where
    assert key.encode() not in _everything_under(tmp_path), "files"
    assert key not in " ".join(cli.args)  # --rpc-env: the key is not on the command line (nor in ps)
